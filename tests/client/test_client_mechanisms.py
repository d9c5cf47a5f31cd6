"""Every registered mechanism works on the device: plain and memoized reports are valid JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.client.hazmat_memo import Memoizer
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.client.state import StateDir
from ldpsurvey.shared.mechanisms import MECHANISMS, mechanism_for
from ldpsurvey.shared.survey import Survey

OPTIONS = ["none", "a little", "some", "a lot", "all"]


def question_for(name: str) -> tuple[dict[str, Any], Any]:
    """A question dict the named mechanism fits, and a valid true answer for it."""
    types = MECHANISMS[name].question_types
    q: dict[str, Any] = {"id": "q", "text": "?", "epsilon": 1.0, "mechanism": name}
    if "categorical" in types or "ordinal" in types:
        q.update(type="ordinal" if "ordinal" in types else "categorical", options=OPTIONS)
        return q, "some"
    if "binary" in types:
        return {**q, "type": "binary"}, True
    return {**q, "type": "integer", "min": 0, "max": 10}, 4


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_answers_on_the_device(name: str, tmp_path: Path) -> None:
    q, answer = question_for(name)
    plain = Survey.from_dict({"id": "s", "title": "t", "version": 1, "questions": [q]})
    series = Survey.from_dict({"id": "s", "title": "t", "version": 2, "series": "w",
                               "questions": [q]})
    mechanism = mechanism_for(plain.questions[0])
    r = Respondent("http://127.0.0.1:9", state_dir=str(tmp_path))
    for survey in (plain, series):
        submission = r.answer(survey, {"q": answer})
        report = json.loads(json.dumps(submission.wire()))["answers"]["q"]
        assert mechanism.validate_report(report) is not None
    memo = Memoizer(StateDir(tmp_path))
    first = memo.permanent_value(mechanism, "w", "q", answer)
    assert memo.permanent_value(mechanism, "w", "q", answer) == first
    # In a series without an instantaneous layer the report is the permanent value itself.
    assert r.answer(series, {"q": answer}).reports["q"] == json.loads(json.dumps(first))
