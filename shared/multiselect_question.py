"""The `multiselect` question type (check all that apply), and parsing it.

    [[questions]]
    id = "substances"
    type = "multiselect"
    text = "Which of these have you used in the past 12 months? (check all that apply)"
    options = ["cannabis", "cocaine", "ecstasy", "opioids"]
    max_selected = 3     # optional, default = the number of options
    required_min = 1     # optional: 0 (default: nothing selected is an answer) or 1
    exclusive = ["none"] # optional: options that can only be selected alone
    epsilon = 2.0
    mechanism = "auto"   # or option_rr, set_ue, psfo_grr, psfo_olh

The answer is a list of distinct option labels in any order ([] = none selected); its
canonical order is the options' order. `optional = true` keeps its meaning (the whole question
may be left out, which the server sees). The mechanisms (shared/mechanisms/set_choice.py) are
proven ε-LDP for any two allowed answer sets. Errors name the question by id
(`questions.<id>.<field>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .errors import SurveyError
from .mechanisms.set_base import MAX_SET_OPTIONS, SetShape
from .question_types import fields
from .question_types.base import Definition, check_not_asked_domain

MULTISELECT_KEYS = {"options", "max_selected", "required_min", "exclusive"}
_REFUSED = {
    "groups": "a multiselect question has no groups: its options' shares overlap",
    "instantaneous_epsilon": "a multiselect question has no instantaneous layer",
    "disclosed": "a multiselect question is always randomized (it cannot be disclosed, yet)",
}


def parse_multiselect_question(definition: Definition) -> Any:
    """The Question for a multiselect question's table (id and text already checked, the
    multiselect unit's `parse`). `definition.not_asked`: it depends on randomized answers
    (skip logic; `definition.skip` holds its `relevant` and parsed condition), so its
    mechanism also carries a "not asked" value (shared/multiselect_not_asked.py)."""
    from .mechanisms.registry import REPORT_SIZE_LIMIT, mechanism_for
    from .mechanisms.set_choice import SET_MECHANISMS, choose_set_mechanism

    data, qid, text = definition.data, definition.id, definition.text
    size_limit, not_asked = definition.size_limit, definition.not_asked
    at = f"questions.{qid}"
    for key, why in _REFUSED.items():
        if key in data and data[key] not in (None, False):
            raise SurveyError(f"{at}.{key}", why)
    optional = fields.optional(data, at)
    options = fields.options(data.get("options"), f"{at}.options")
    if len(options) > MAX_SET_OPTIONS:
        raise SurveyError(f"{at}.options", f"a multiselect question has at most "
                          f"{MAX_SET_OPTIONS} options")
    shape = SetShape(len(options), _integer(data, "max_selected", len(options), at),
                     _integer(data, "required_min", 0, at), _exclusive(data, options, at))
    problem = shape.problem()
    if problem is not None:
        raise SurveyError(f"{at}.{problem[0]}", problem[1])
    epsilon = fields.epsilon(data.get("epsilon"), f"{at}.epsilon")
    requested = data.get("mechanism", "auto")
    if not isinstance(requested, str) or (requested != "auto"
                                          and requested not in SET_MECHANISMS):
        known = ", ".join(sorted(SET_MECHANISMS))
        raise SurveyError(f"{at}.mechanism", f"a multiselect question uses auto or one of: "
                          f"{known}; not {requested!r}")
    choice = data.get("mechanism_choice")
    if choice is not None and (not isinstance(choice, str) or requested == "auto"):
        raise SurveyError(f"{at}.mechanism_choice",
                          "is written by auto selection next to a concrete mechanism")
    question = definition.build(id=qid, text=text, type=data["type"], epsilon=epsilon,
                                mechanism=requested, options=options, optional=optional,
                                mechanism_choice=choice, multiselect=shape,
                                not_asked=not_asked, **definition.skip)
    if not_asked:
        check_not_asked_domain(question.options, at)
        question = choose_not_asked_set_mechanism(question, requested,
                                                  size_limit or REPORT_SIZE_LIMIT, at)
    elif requested == "auto":
        name, choice = choose_set_mechanism(question, size_limit or REPORT_SIZE_LIMIT, at)
        question = replace(question, mechanism=name, mechanism_choice=choice)
    cls = SET_MECHANISMS[question.mechanism]
    misfit = cls.misfit(shape.k, epsilon) or None
    if misfit is not None:
        field = "epsilon" if misfit.field == "epsilon" else "options"
        raise SurveyError(f"{at}.{field}", f"{misfit.problem} (mechanism {question.mechanism!r})")
    params = mechanism_for(question).params()  # proves its ε; SurveyError for a misfit shape
    given = data.get("params")
    if given is not None and not isinstance(given, dict):
        raise SurveyError(f"{at}.params", "must be a table (an object of parameters)")
    if given is not None and given != {} and given != params:
        raise SurveyError(f"{at}.params", f"do not match mechanism {question.mechanism!r} at "
                          f"epsilon {epsilon!r} for this question: expected {params}")
    return replace(question, params=params)


def choose_not_asked_set_mechanism(question: Any, requested: str, size_limit: int,
                                   where: str) -> Any:
    """A multiselect question with a "not asked" value: its set mechanism runs over the
    options + "not asked" (shared/multiselect_not_asked.py); `auto` ranks those that carry it
    by the average variance per option over that shape."""
    from .mechanisms.set_choice import set_candidates
    from .multiselect_not_asked import NOT_ASKED_SET_MECHANISMS, check_set_mechanism

    shape = question.multiselect
    check_set_mechanism(requested if requested != "auto" else "option_rr", shape.k, where)
    if requested != "auto":
        return question
    wider = shape.with_not_asked()
    ranked = [(var, name) for var, _, name in set_candidates(wider, question.epsilon,
                                                             size_limit)
              if name in NOT_ASKED_SET_MECHANISMS]
    if not ranked:
        raise SurveyError(f"{where}.mechanism", "no multiselect mechanism that carries a "
                          f"'not asked' value fits k={shape.k} at epsilon={question.epsilon:g}")
    best_var, best = min(ranked)
    return replace(question, mechanism=best, mechanism_choice=(
        f"auto: a question that depends on randomized answers has a 'not asked' value; lowest "
        f"variance averaged over options at k={shape.k}+1, max_selected={shape.max_selected}, "
        f"epsilon={question.epsilon:g}: {best} {best_var:.4g}"))


def _exclusive(data: Mapping[str, Any], options: Any, at: str) -> tuple[int, ...]:
    """The indices of the options that can only be selected alone (absent: none)."""
    value = data.get("exclusive")
    if value is None:
        return ()
    if (not isinstance(value, list) or not value
            or any(not isinstance(x, str) or x not in options for x in value)
            or len(set(value)) != len(value)):
        raise SurveyError(f"{at}.exclusive", "must be a list of distinct options of the "
                          "question (those that can only be selected alone, such as \"none\")")
    return tuple(sorted(list(options).index(x) for x in value))


def _integer(data: Mapping[str, Any], key: str, default: int, at: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SurveyError(f"{at}.{key}", "must be an integer")
    return value
