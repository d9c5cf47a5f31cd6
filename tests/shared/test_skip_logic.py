"""Skip logic in a survey (shared/skip_logic.py): which conditions make a "not asked" value,
what is refused at publish (naming `questions.<id>.relevant`), what a device randomizes for
each set of answers, and what a server accepts."""

from __future__ import annotations

from typing import Any

import pytest
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.skip_logic import (
    NOT_ASKED,
    OptionalFollowUpError,
    presence_problems,
    resolve_answers,
)
from ldpsurvey.shared.survey import Survey

GATE = {"id": "used", "text": "Used?", "type": "binary", "epsilon": 1.0}
REGION = {"id": "region", "text": "Region?", "type": "categorical", "disclosed": True,
          "options": ["north", "south"]}


def survey(*questions: dict[str, Any], **extra: Any) -> Survey:
    return Survey.from_dict({"id": "s", "title": "S", "version": 1,
                             "questions": list(questions), **extra})


def refusal(*questions: dict[str, Any]) -> SurveyError:
    with pytest.raises(SurveyError) as info:
        survey(*questions)
    return info.value


def test_a_condition_on_a_randomized_answer_adds_not_asked_to_the_domain() -> None:
    s = survey(GATE,
               {"id": "freq", "text": "F?", "type": "categorical", "epsilon": 2.0,
                "options": ["rarely", "often"], "relevant": "used"},
               {"id": "again", "text": "A?", "type": "binary", "epsilon": 1.0,
                "relevant": "freq == 'often'"},
               {"id": "n", "text": "N?", "type": "integer", "epsilon": 1.0, "min": 0,
                "max": 10, "relevant": "used"})
    freq, again, n = s.questions[1:]
    assert freq.not_asked and freq.labels == ("rarely", "often", NOT_ASKED) and freq.k == 3
    assert again.not_asked and again.labels == (False, True, NOT_ASKED)  # 3-valued
    assert again.mechanism == "grr"  # binary_rr has no third value
    assert n.not_asked and n.mechanism == "asked_geometric"
    for q in (freq, again, n):
        assert mechanism_for(q).realized_epsilon() <= q.epsilon


def test_a_condition_on_disclosed_answers_only_adds_nothing() -> None:
    s = survey(REGION, {"id": "clinic", "text": "C?", "type": "binary", "epsilon": 1.0,
                        "relevant": "region == 'north'"})
    clinic = s.questions[1]
    assert not clinic.not_asked and clinic.labels == (False, True)
    assert clinic.mechanism == "binary_rr"


def test_canonical_bytes_carry_the_condition_only_when_there_is_one() -> None:
    plain = survey(GATE)
    assert "relevant" not in plain.canonical_bytes().decode()
    follow = survey(GATE, {"id": "x", "text": "X?", "type": "binary", "epsilon": 1.0,
                           "relevant": "not used"})
    assert follow.to_dict()["questions"][1]["relevant"] == "not used"
    assert Survey.from_dict(follow.to_dict()).canonical_bytes() == follow.canonical_bytes()


def test_amend_changes_a_refused_question_in_place_and_the_check_goes_on() -> None:
    """`Survey.from_dict(amend=...)`: every optional follow-up of randomized answers is handed
    to `amend` in order with its OptionalFollowUpError (`reads`: the ids its condition reads),
    and the survey built is the amended table's, as if checked from the start; a refusal
    `amend` leaves (None) stands, with the earlier amendments made."""
    def follow(qid: str, relevant: str, **more: Any) -> dict[str, Any]:
        return {"id": qid, "text": "F?", "type": "binary", "epsilon": 1.0, "optional": True,
                "relevant": relevant, **more}

    questions = [GATE, follow("a", "used"), follow("b", "a and used"), REGION,
                 follow("public", "region == 'north'")]
    seen: list[tuple[int, str, str]] = []

    def required(index: int, question: Any, error: SurveyError) -> dict[str, Any] | None:
        if not isinstance(error, OptionalFollowUpError):
            return None
        seen.append((index, error.field, error.reads))
        return {key: value for key, value in question.items() if key != "optional"}

    s = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": questions},
                         amend=required)
    assert seen == [(1, "questions.a.relevant", "used"), (2, "questions.b.relevant", "a, used")]
    as_required = [GATE, follow("a", "used", optional=False),
                   follow("b", "a and used", optional=False), REGION, questions[4]]
    assert s.canonical_bytes() == survey(*as_required).canonical_bytes()
    assert s.question("public").optional and not s.question("public").not_asked
    seen.clear()
    with pytest.raises(SurveyError) as info:
        Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
            GATE, follow("a", "used"), follow("c", "used", mechanism="nope")]}, amend=required)
    assert info.value.field == "questions.c.mechanism"
    assert [index for index, _, _ in seen] == [1, 2]  # c made required, then refused


@pytest.mark.parametrize(("change", "words"), [
    ({"relevant": "later"}, "comes later in the survey"),
    ({"relevant": "nope"}, 'no question "nope"'),
    ({"relevant": "used == 3"}, '"==" compares a yes/no value with a number'),
    ({"relevant": "used = true"}, 'use "=="'),
    ({"relevant": ""}, "non-empty condition"),
    ({"relevant": 3}, "non-empty condition"),
    ({"optional": True, "relevant": "used"}, "an optional question cannot depend"),
    ({"relevant": "used", "mechanism": "binary_rr"}, "cannot carry the 'not asked' value"),
    ({"relevant": "used", "mechanism": "oue", "type": "categorical",
      "options": ["a", "b"]}, "cannot carry the 'not asked' value"),
    ({"relevant": "used", "type": "categorical", "options": ["a", NOT_ASKED]},
     "rename this option"),
])
def test_refusals_name_the_question_and_its_field(change: dict[str, Any], words: str) -> None:
    question = {"id": "x", "text": "X?", "type": "binary", "epsilon": 1.0, **change}
    error = refusal(GATE, question, {"id": "later", "text": "L?", "type": "binary",
                                     "epsilon": 1.0})
    assert error.field.startswith("questions.x."), error
    assert words in error.problem, error


def test_a_disclosed_question_cannot_depend_on_a_randomized_answer() -> None:
    """Its presence would publish the answer its condition reads."""
    error = refusal(GATE, {**REGION, "relevant": "used"})
    assert error.field == "questions.region.relevant"
    assert "would reveal" in error.problem
    survey(REGION, {**REGION, "id": "city", "relevant": "region == 'north'"})  # disclosed: fine


def test_a_location_question_cannot_depend_on_a_randomized_answer() -> None:
    home = {"id": "home", "text": "Where?", "type": "location", "epsilon_geo": 1.0,
            "grid": {"rows": 2, "cols": 2, "cell_km": 1.0}}
    assert refusal(GATE, {**home, "relevant": "used"}).field == "questions.home.relevant"
    assert survey(REGION, {**home, "relevant": "region == 'south'"}).questions[1].relevant


def test_a_two_server_survey_follows_the_same_rule() -> None:
    from support.two_server import two_server_survey

    data = two_server_survey("https://helper.example:8443", b"h" * 32, b"l" * 32)
    first = data["questions"][0]
    data["questions"].append({"id": "then", "text": "Then?", "type": "binary",
                              "central_epsilon": 1.0, "relevant": f"{first['id']} == true"
                              if first["type"] == "binary" else "true"})
    then = Survey.from_dict(data).questions[-1]
    assert then.not_asked == (first["type"] == "binary")
    assert then.k == (3 if then.not_asked else 2)


# --- what a device randomizes --------------------------------------------------------------

FOLLOW = survey(GATE, REGION,
                {"id": "freq", "text": "F?", "type": "categorical", "epsilon": 2.0,
                 "options": ["rarely", "often"], "relevant": "used"},
                {"id": "clinic", "text": "C?", "type": "binary", "epsilon": 1.0,
                 "relevant": "region == 'north'"})


@pytest.mark.parametrize(("answers", "values"), [
    ({"used": True, "region": "north", "freq": "often", "clinic": False},
     {"used": True, "region": "north", "freq": "often", "clinic": False}),
    ({"used": False, "region": "north", "clinic": True},
     {"used": False, "region": "north", "freq": NOT_ASKED, "clinic": True}),
    ({"used": False, "region": "south"},
     {"used": False, "region": "south", "freq": NOT_ASKED}),  # nothing for clinic
])
def test_what_a_device_randomizes(answers: dict[str, Any], values: dict[str, Any]) -> None:
    assert resolve_answers(FOLLOW.questions, answers) == values
    assert resolve_answers(FOLLOW.questions, values) == values  # checking again: the same


@pytest.mark.parametrize(("answers", "words"), [
    ({"used": False, "region": "north", "freq": "often", "clinic": True}, "does not apply"),
    ({"used": True, "region": "north", "clinic": True}, "'freq' is required"),
    ({"used": True, "region": "south", "freq": NOT_ASKED}, "is not an answer"),
    ({"used": False, "region": "south", "clinic": NOT_ASKED}, "does not apply"),
])
def test_answers_that_do_not_fit_the_skip_logic_are_refused(answers: dict[str, Any],
                                                           words: str) -> None:
    with pytest.raises(AnswerError, match=words):
        resolve_answers(FOLLOW.questions, answers)


def test_a_server_checks_presence_against_the_disclosed_answers() -> None:
    from ldpsurvey.shared.skip_logic import public_skips

    skips = public_skips(FOLLOW)
    assert [q.id for q in skips] == ["clinic"]
    north, south = 0, 1  # disclosed reports are option indices
    assert presence_problems(FOLLOW, skips, {"region": north, "clinic": True}) == []
    assert presence_problems(FOLLOW, skips, {"region": south}) == []
    (missing,) = presence_problems(FOLLOW, skips, {"region": north})
    assert missing["field"] == "answers.clinic" and "missing" in missing["message"]
    (extra,) = presence_problems(FOLLOW, skips, {"region": south, "clinic": True})
    assert "does not apply" in extra["message"]


def test_answered_follows_the_privacy_rule_of_the_question_it_reads() -> None:
    """answered(q) reads q like any reference: of a randomized optional question it is a
    hidden condition (the follow-up is sent by everyone, "not asked" otherwise, so whether q
    was answered stays on the device); of a disclosed optional question it is public, and the
    server's presence check reads it from the disclosed report it has or has not."""
    from ldpsurvey.shared.skip_logic import public_skips

    hidden = survey({**GATE, "optional": True},
                    {"id": "why", "text": "W?", "type": "binary", "epsilon": 1.0,
                     "relevant": "answered(used)"})
    assert hidden.questions[1].not_asked and not public_skips(hidden)
    for answers, why in (({"used": None}, NOT_ASKED), ({"used": False, "why": True}, True)):
        assert resolve_answers(hidden.questions, answers)["why"] == why
    public = survey({**REGION, "optional": True},
                    {"id": "clinic", "text": "C?", "type": "binary", "epsilon": 1.0,
                     "relevant": "not answered(region)"})
    skips = public_skips(public)
    assert [q.id for q in skips] == ["clinic"] and not public.questions[1].not_asked
    assert presence_problems(public, skips, {"clinic": True}) == []
    assert presence_problems(public, skips, {"region": 0}) == []
    (extra,) = presence_problems(public, skips, {"region": 1, "clinic": False})
    assert "does not apply" in extra["message"]
