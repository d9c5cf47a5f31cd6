"""An invalid answer is named itself, before a later question's condition reads it.

Conditions read the answers given (shared/skip_logic.py resolve_answers). An answer outside
its question's domain used to be read first: a multiselect answered with the string
"cannabis" holds selected(substances, 'cannabis') (a substring), so the device said
"question 'cannabis_frequency' is required" instead of what was wrong. Both collection modes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.two_server import check_answers as check_two_server
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.survey import Survey, load_survey
from support.skip import skip_two_server

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "drug-use.toml"


@pytest.mark.parametrize(("answers", "named"), [
    ({"substances": "cannabis"}, "'cannabis' is not a list of options to 'substances'"),
    ({"substances": {"cannabis": True}}, "is not a list of options to 'substances'"),
    ({"substances": [1]}, "1 is not one of the options to 'substances'"),
    ({"substances": ["Cannabis"]}, "'Cannabis' is not one of the options to 'substances'"),
])
def test_a_multiselect_answer_is_refused_before_conditions_read_it(
        tmp_path: Path, answers: dict[str, Any], named: str) -> None:
    device = Respondent("http://127.0.0.1:9", state_dir=str(tmp_path))
    with pytest.raises(AnswerError) as caught:
        device.check_answers(load_survey(SAMPLE), answers)
    assert named in caught.value.message, caught.value.message


def test_a_two_server_gate_answered_with_text_is_named() -> None:
    survey = Survey.from_dict(skip_two_server("https://helper.example", b"h" * 32, b"l" * 32,
                                              "skip-ts"))
    gate = survey.questions[0]
    with pytest.raises(AnswerError) as caught:
        check_two_server(survey, {gate.id: "yes"})
    assert repr(gate.id) in caught.value.message and "required" not in caught.value.message
