"""`carried = true` (shared/survey.py): a disclosed integer whose answer is the value the
respondent's invitation carries from the main survey's export (docs/sensitive-module.md).
It is refused where it could not hold (randomized, optional, conditional, another type, a
two-server survey), and it is part of the signed bytes only when set."""

from __future__ import annotations

from typing import Any

import pytest
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.survey import Survey

CARRIED = {"id": "children_n", "text": "Members aged 5 to 17", "type": "integer", "min": 0,
           "max": 30, "disclosed": True, "carried": True}
FOLLOW_UP = {"id": "school", "text": "Left school?", "type": "binary", "epsilon": 1.0,
             "relevant": "children_n >= 1"}


def survey(*questions: dict[str, Any], **extra: Any) -> Survey:
    return Survey.from_dict({"id": "s", "title": "S", "version": 1,
                             "questions": list(questions), **extra})


def test_a_carried_integer_is_a_disclosed_question_a_condition_reads() -> None:
    s = survey(CARRIED, FOLLOW_UP)
    q = s.question("children_n")
    assert q.carried and q.disclosed and (q.min, q.max) == (0, 30)
    assert s.to_dict()["questions"][0]["carried"] is True
    assert s.question("school").relevant == "children_n >= 1"
    assert Survey.from_dict(s.to_dict()).sha256 == s.sha256
    # without carried, the bytes are a disclosed question's as before
    plain = survey({k: v for k, v in CARRIED.items() if k != "carried"}, FOLLOW_UP)
    assert "carried" not in plain.to_dict()["questions"][0]
    assert plain.sha256 != s.sha256


@pytest.mark.parametrize(("changes", "message"), [
    ({"carried": "yes"}, "must be true or false"),
    ({"disclosed": False, "epsilon": 1.0}, "add disclosed = true"),
    ({"optional": True}, "drop optional"),
    ({"relevant": "true"}, "drop relevant"),
    ({"type": "categorical", "options": ["a", "b"], "min": None, "max": None},
     "integer questions only"),
])
def test_a_carried_question_that_cannot_hold_is_refused(changes: dict[str, Any],
                                                        message: str) -> None:
    question = {k: v for k, v in {**CARRIED, **changes}.items()
                if v is not None and not (k == "disclosed" and v is False)}
    with pytest.raises(SurveyError) as refused:
        survey({"id": "first", "text": "?", "type": "binary", "epsilon": 1.0}, question)
    assert refused.value.field == "questions.children_n.carried"
    assert message in refused.value.message
