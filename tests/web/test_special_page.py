"""Special values ("Don't know", "Prefer not to say") on the page, in real Chromium against the
real server: each is a choice below the question's own (a radio after the options, after a
number's box), the review says what the device sends for it, the server takes every report,
and `report` gives the special shares; an exclusive "None of these" goes with them."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from test_page import READY, SENT

PNTS = "Prefer not to say"
SPECIAL = {"dont_know": "Don't know", "refused": PNTS}
NONE = "None of these"


def survey(deployment: Any) -> dict[str, Any]:
    data = {"id": f"special-{next(deployment.ids)}", "title": "Special", "version": 1,
            "questions": [
                {"id": "used", "text": "Have you used it?", "type": "binary", "epsilon": 1.0,
                 "special": SPECIAL},
                {"id": "where", "text": "Where?", "type": "categorical", "epsilon": 1.0,
                 "options": ["home", "work", "elsewhere"], "special": SPECIAL},
                {"id": "often", "text": "How often?", "type": "ordinal", "epsilon": 1.0,
                 "mechanism": "ordinal_exp", "options": ["never", "sometimes", "often"],
                 "special": SPECIAL},
                {"id": "days", "text": "On how many days?", "type": "integer", "epsilon": 1.0,
                 "min": 0, "max": 30, "special": SPECIAL},
                {"id": "which", "text": "Which of these?", "type": "multiselect",
                 "epsilon": 1.0, "mechanism": "psfo_grr", "max_selected": 4,
                 "options": ["a", "b", "c", NONE], "exclusive": [NONE]}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    return data


def test_prefer_not_to_say_on_every_question_end_to_end(deployment: Any, page: Any) -> None:
    data = survey(deployment)
    sid = data["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    days = page.locator("#q3-fieldset")
    days.get_by_label(PNTS, exact=True).check()
    page.fill("#q3-input", "5")  # a number unchecks the special value, and back
    assert not days.get_by_label(PNTS, exact=True).is_checked()
    for index in range(4):  # below each question's own answer control
        page.locator(f"#q{index}-fieldset").get_by_label(PNTS, exact=True).check()
    page.get_by_label(NONE, exact=True).check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert page.input_value("#q3-input") == ""
    review = page.locator("#review").inner_text()
    assert review.count(PNTS) >= 4 and NONE in review, review
    # the integer's status code, with the chance of each other status
    assert "send the status “Prefer not to say” with probability" in review, review
    assert "‘an answer’, “Don't know”" in review, review
    page.click("#send")
    page.wait_for_selector(SENT)
    stored = deployment.stored(sid)
    assert len(stored) == 1
    parsed = Survey.from_dict(data)
    for submission in stored:
        for q in parsed.questions:
            mechanism_for(q).validate_report(submission["answers"][q.id])
        assert submission["answers"]["days"][0] in (0, 1, 2)  # a status code, not a bit
    result = CliRunner().invoke(cli, ["report", "--db", str(deployment.server.db_path),
                                      "--survey", sid, "--format", "json"])
    assert result.exit_code == 0, result.output
    questions = {q["question"]: q for q in json.loads(result.stdout)["questions"]}
    for qid in ("used", "where", "often", "days"):
        assert [s["value"] for s in questions[qid]["special"]] == list(SPECIAL.values()), qid
        assert all(s["std_error"] is not None for s in questions[qid]["special"]), qid
    assert NONE in {c["value"] for c in questions["which"]["categories"]}
    assert page.problems == []
