"""The multiselect question type: parsing, canonical form, `auto`, and errors naming the
question by id (contract 2 of the slices: shared/multiselect_question.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.set_base import SetShape
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS, set_candidates
from ldpsurvey.shared.survey import Survey

SUBSTANCES = {
    "id": "substances", "type": "multiselect",
    "text": "Which of these have you used in the past 12 months? (check all that apply)",
    "options": ["cannabis", "cocaine", "ecstasy", "opioids"],
    "max_selected": 3, "required_min": 1, "epsilon": 2.0, "mechanism": "auto",
}


def survey(*questions: dict[str, Any]) -> Survey:
    return Survey.from_dict({"id": "drugs", "title": "Drugs", "version": 1,
                             "questions": list(questions)})


def test_contract_example_parses_and_round_trips() -> None:
    s = survey(SUBSTANCES)
    q = s.questions[0]
    assert q.type == "multiselect" and q.k == 4 and tuple(q.labels) == tuple(SUBSTANCES["options"])
    assert q.multiselect == SetShape(4, 3, 1)
    assert q.mechanism in SET_MECHANISMS and q.mechanism_choice.startswith("auto:")
    d = q.to_dict()
    assert d["options"] == SUBSTANCES["options"]
    assert (d["max_selected"], d["required_min"]) == (3, 1)
    again = Survey.from_dict(s.to_dict())
    assert again.canonical_bytes() == s.canonical_bytes()


def test_defaults_every_option_and_the_empty_set() -> None:
    raw = {k: v for k, v in SUBSTANCES.items() if k not in ("max_selected", "required_min")}
    q = survey(raw).questions[0]
    assert q.multiselect == SetShape(4, 4, 0)
    assert q.to_dict()["max_selected"] == 4 and q.to_dict()["required_min"] == 0
    mech = mechanism_for(q)
    assert mech.encode([]) == 0
    assert mech.encode(["opioids", "cannabis", "cocaine", "ecstasy"]) == 0b1111


def test_auto_picks_the_lowest_average_variance() -> None:
    for k, m, eps in ((4, 3, 2.0), (20, 1, 1.0), (20, 3, 4.0), (10, 10, 4.0), (64, 2, 0.5)):
        q = survey({**SUBSTANCES, "options": [f"o{i}" for i in range(k)], "max_selected": m,
                    "required_min": 0, "epsilon": eps}).questions[0]
        ranked = set_candidates(SetShape(k, m), eps, 1024)
        assert q.mechanism == ranked[0][2]
        assert all(a[0] <= b[0] for a, b in itertools.pairwise(ranked))


@pytest.mark.parametrize("name", sorted(SET_MECHANISMS))
def test_each_mechanism_can_be_named(name: str) -> None:
    raw = {**SUBSTANCES, "options": [f"o{i}" for i in range(8)], "max_selected": 2,
           "mechanism": name}
    q = survey(raw).questions[0]
    assert q.mechanism == name and q.mechanism_choice is None
    # the canonical form names its params; a survey giving other params is refused
    assert Survey.from_dict(survey(raw).to_dict()).questions[0].params == q.params
    with pytest.raises(SurveyError, match=r"questions\.substances\.params"):
        survey({**raw, "params": {**q.params, "p": "1/3"}})


@pytest.mark.parametrize("change, field, words", [
    ({"options": ["a"]}, "options", "at least 2"),
    ({"options": [f"o{i}" for i in range(65)]}, "options", "at most 64"),
    ({"options": ["a", "a"]}, "options[1]", "duplicate"),
    ({"max_selected": 0}, "max_selected", "from 1 to 4"),
    ({"max_selected": 5}, "max_selected", "from 1 to 4"),
    ({"max_selected": 2.0}, "max_selected", "integer"),
    ({"max_selected": True}, "max_selected", "integer"),
    ({"required_min": 2}, "required_min", "0 (nothing selected"),
    ({"required_min": "1"}, "required_min", "integer"),
    ({"epsilon": 0}, "epsilon", "> 0"),
    ({"epsilon": 60.0}, "epsilon", "between"),
    ({"mechanism": "grr"}, "mechanism", "option_rr"),
    ({"mechanism": "set_ue", "max_selected": 3}, "max_selected", "at most half"),
    ({"groups": {"stimulants": ["cocaine", "ecstasy"]}}, "groups", "no groups"),
    ({"instantaneous_epsilon": 1.0}, "instantaneous_epsilon", "no instantaneous"),
    ({"disclosed": True}, "disclosed", "always randomized"),
    ({"min": 1}, "min", "unknown key"),
    ({"optional": "yes"}, "optional", "true or false"),
    ({"mechanism_choice": "mine"}, "mechanism_choice", "written by auto"),
])
def test_errors_name_the_question_by_id(change: dict[str, Any], field: str,
                                        words: str) -> None:
    raw = {**SUBSTANCES, **change}
    with pytest.raises(SurveyError) as caught:
        survey(raw)
    assert caught.value.field in (f"questions.substances.{field}", f"questions[0].{field}")
    assert words in caught.value.problem


def test_a_declared_crosstab_of_a_multiselect_question_is_published() -> None:
    """Its joint aggregate serves every option (each crossed against not selecting it:
    shared/joint_sets.py); bins are refused, as for any question that is not an integer."""
    other = {"id": "age", "type": "categorical", "text": "Age?", "options": ["<30", "30+"],
             "epsilon": 1.0}
    s = Survey.from_dict({"id": "drugs", "title": "Drugs", "version": 1,
                          "questions": [SUBSTANCES, other], "crosstabs": [["substances", "age"]]})
    assert [c.key for c in s.crosstabs] == ["crosstab:substances:age"]
    with pytest.raises(SurveyError, match="bins apply to integer questions"):
        Survey.from_dict({"id": "drugs", "title": "Drugs", "version": 1,
                          "questions": [SUBSTANCES, other],
                          "crosstabs": [{"rows": "substances", "cols": "age",
                                         "row_bins": [1]}]})


def test_answers_are_sets_of_labels_in_any_order() -> None:
    mech = mechanism_for(survey(SUBSTANCES).questions[0])
    assert mech.canonical(["opioids", "cannabis"]) == ["cannabis", "opioids"]
    assert mech.encode(("ecstasy",)) == 0b0100
    for bad, words in (([], "at least one"), (["cannabis"] * 2, "twice"),
                       (["cannabis", "cocaine", "ecstasy", "opioids"], "at most 3"),
                       ("cannabis", "not a list"), (["heroin"], "not one of the options")):
        with pytest.raises(AnswerError, match=words):
            mech.encode(bad)
