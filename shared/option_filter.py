"""Cascading options: a categorical question whose options the respondent's device narrows to
those that go with an earlier answer (an XLSForm `choice_filter`; docs/option-filter.md).

    [[questions]]
    id = "admin2"
    type = "categorical"
    options = ["Kabul city", "Paghman", "Herat city"]
    filter = { by = "admin1", values = { "Kabul city" = ["Kabul"], "Paghman" = ["Kabul"],
                                         "Herat city" = ["Herat"] } }

Each option names the answers of the earlier question `by` it goes with. The filter is a
matter of what the device SHOWS, never of what is sent: the question's mechanism, its ε and
its report range over the FULL option list, as without a filter, and the signed survey carries
the full list and the rule; so the server learns nothing from the filter that the randomized
report does not already bound (the mechanism's ε is over the whole domain). The page
(client/web/js/option_filter.js) and `respond` (client/cli.py) show `shown_options`, the same
options for the same answers (tests/web/test_option_filter_vectors.py); the device refuses an
answer among the options NOT shown (`check_shown`, run by every device path that checks true
answers before drawing: `Respondent.check_answers`, hence `respond --answers` and the prompts,
and a two-server upload), as the page, which offers only the shown ones, cannot send one.

`by` must be an earlier question whose answer the device holds as options: categorical,
ordinal (one option) or multiselect (the options ticked: an option shows when it goes with any
of them, XLSForm's `selected(${q}, column)`). Every option must name at least one of `by`'s
options, each once.

When the filter cannot narrow, every option shows: `by` was not asked (skip logic), was
skipped (optional), was answered with a special value ("Don't know", "Prefer not to say") or
with no option at all, or no option goes with its answer. A respondent is never left without
an answer to give, and showing everything says nothing about the answer that was not shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import AnswerError, SurveyError
from .question_types.base import special_labels

_KEYS = frozenset({"by", "values"})


@dataclass(frozen=True)
class OptionFilter:
    """Which options of a question show: option -> the options of question `by` it goes
    with (in `by`'s order)."""

    by: str
    values: Mapping[str, tuple[str, ...]]

    def to_dict(self) -> dict[str, Any]:
        """The canonical form (Question.to_dict's `filter`)."""
        return {"by": self.by, "values": {o: list(v) for o, v in self.values.items()}}


def parse_filter(value: Any, where: str, options: Sequence[str], earlier: Sequence[Any]
                 ) -> OptionFilter | None:
    """The `filter` of a question with `options` after the questions `earlier` (None when
    absent); SurveyError naming `<where>.filter.<field>` otherwise."""
    if value is None:
        return None
    at = f"{where}.filter"
    if not isinstance(value, Mapping):
        raise SurveyError(at, 'must be a table: { by = "earlier_question", values = { '
                          '"option" = ["earlier answer", ...], ... } }')
    unknown = sorted(str(k) for k in value if k not in _KEYS)
    if unknown:
        raise SurveyError(f"{at}.{unknown[0]}", "unknown key (a filter has by and values)")
    by = _by(value.get("by"), f"{at}.by", earlier)
    return OptionFilter(by=by.id, values=_values(value.get("values"), f"{at}.values", options,
                                                 by))


def _by(name: Any, where: str, earlier: Sequence[Any]) -> Any:
    if not isinstance(name, str) or not name:
        raise SurveyError(where, "must name an earlier question (its id)")
    found = next((q for q in earlier if q.id == name), None)
    if found is None:
        raise SurveyError(where, f"{name!r} is not a question asked before this one: the "
                          "options can follow only an earlier answer")
    if not found.unit.filter_reads:
        raise SurveyError(where, f"{name!r} is {found.unit.described}: the options can "
                          f"follow only an answer that is options ({', '.join(filter_reading())})")
    return found


def filter_reading() -> tuple[str, ...]:
    """The question types whose answer a filter can follow (their units' `filter_reads`)."""
    from .question_types import units

    return tuple(unit.name for unit in units() if unit.filter_reads)


def _values(value: Any, where: str, options: Sequence[str], by: Any
            ) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        raise SurveyError(where, f"must be a table: each option -> the options of "
                          f"{by.id!r} it goes with")
    for option in value:
        if option not in options:
            raise SurveyError(f"{where}.{option}", "is not an option of this question")
    order = {o: i for i, o in enumerate(by.options)}
    found: dict[str, tuple[str, ...]] = {}
    for option in options:  # in the question's order: one canonical form
        listed = value.get(option)
        at = f"{where}.{option}"
        if listed is None:
            raise SurveyError(at, f"missing: every option names the options of {by.id!r} it "
                              "goes with")
        if not isinstance(listed, list) or not listed:
            raise SurveyError(at, f"must be a non-empty list of options of {by.id!r}")
        for item in listed:
            if item not in order:
                raise SurveyError(at, f"{item!r} is not an option of {by.id!r}")
        if len(set(listed)) != len(listed):
            raise SurveyError(at, f"names an option of {by.id!r} twice")
        found[option] = tuple(sorted(listed, key=order.__getitem__))
    return found


def chosen(by: Any, answer: Any) -> frozenset[str]:
    """The options of question `by` its answer holds: none for no answer, "not asked", a
    special value or anything that is not its options."""
    options = set(by.options)
    if isinstance(answer, str):
        return frozenset({answer} & options)
    if isinstance(answer, Iterable) and not isinstance(answer, Mapping | bytes):
        return frozenset(a for a in answer if isinstance(a, str) and a in options)
    return frozenset()


def shown_options(question: Any, by: Any, answer: Any) -> tuple[str, ...]:
    """The options of `question` the device shows when question `by` was answered `answer`
    (module docstring): those that go with it, or every option when it narrows to none."""
    rule = question.option_filter
    if rule is None:
        return tuple(question.options)
    picked = chosen(by, answer)
    shown = tuple(o for o in question.options if picked.intersection(rule.values[o]))
    return shown or tuple(question.options)


def shown_for(question: Any, questions: Mapping[str, Any], answers: Mapping[str, Any]
              ) -> tuple[str, ...]:
    """`shown_options` with `by` and its answer looked up (`questions`: id -> question,
    `answers`: id -> the true answers given so far)."""
    rule = question.option_filter
    if rule is None:
        return tuple(question.options)
    return shown_options(question, questions[rule.by], answers.get(rule.by))


def check_shown(questions: Sequence[Any], answers: Mapping[str, Any]) -> None:
    """AnswerError, one line naming the question and the options it allows, when the answer to
    a question with a filter is one of its options that the earlier answer hides
    (`shown_for`: what the page and the prompts offer). `answers`: id -> the true answers
    (skip logic resolved); a special value, "not asked" or no answer is not the filter's to
    refuse (a special value always shows; the mechanism checks the domain)."""
    at = {q.id: q for q in questions}
    for q in questions:
        rule = q.option_filter
        answer = answers.get(q.id)
        if rule is None or not isinstance(answer, str) or answer not in q.options:
            continue
        shown = shown_for(q, at, answers)
        if answer in shown:
            continue
        given = sorted(chosen(at[rule.by], answers.get(rule.by)),
                       key=at[rule.by].options.index)
        allowed = ", ".join(repr(o) for o in (*shown, *special_labels(q)))
        raise AnswerError(f"question {q.id!r}: {answer!r} does not go with the answer to "
                          f"{rule.by!r} ({', '.join(map(repr, given))}): the options it "
                          f"allows are {allowed}")
