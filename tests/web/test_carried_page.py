"""A survey whose question takes its value from the invitation (`carried = true`;
docs/sensitive-module.md, "Values a condition reads"), answered on the page in real Chromium
against a real `ldpsurvey serve`: opened from its link, the page shows the value the code
carries, fills the question in (not asked), and the follow-up the value gates is shown or not
as the main interview's value says; without an invitation the page refuses before asking."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
EXPORT = "KEY,consented-ind_age_5_17_n\nuuid:1,2\nuuid:2,0\n"


def carried_survey(deployment: Any, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """Publish the survey, make its codes from the export: interview key -> link."""
    sid = f"carried-{next(deployment.ids)}"
    data = {"id": sid, "title": "Sensitive module", "version": 1, "questions": [
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "children_n", "text": "Household members aged 5 to 17", "type": "integer",
         "min": 0, "max": 30, "disclosed": True, "carried": True},
        {"id": "school_drop", "text": "Has a child of the household left school?",
         "type": "binary", "epsilon": 1.0, "relevant": "smoker == true and children_n >= 1"},
    ]}
    deployment.server.publish(data, deployment.key, deployment.token)
    export = tmp_path / f"{sid}.csv"
    export.write_text(EXPORT, encoding="utf-8")
    made = CliRunner().invoke(cli, ["invites", "create", "--db",
                                    str(deployment.server.db_path), "--survey", sid,
                                    "--from-export", str(export), "--key", "KEY", "--carry",
                                    "children_n=consented-ind_age_5_17_n", "--links",
                                    deployment.server.url])
    assert made.exit_code == 0, made.output
    return sid, {row["key"]: row["link"] for row in csv.DictReader(io.StringIO(made.stdout))}


def test_the_carried_value_is_shown_filled_in_and_gates_the_follow_up(
        deployment: Any, browser: Any, tmp_path: Path) -> None:
    sid, links = carried_survey(deployment, tmp_path)
    for key, value, asked in (("uuid:1", 2, True), ("uuid:2", 0, False)):
        context = browser.new_context()  # another respondent's device
        try:
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error, seen=problems: seen.append(str(error)))
            page.goto(links[key])
            page.wait_for_selector(READY)
            assert f"children_n: {value}" in page.locator("#invite-carries").inner_text()
            shown = page.locator("#q1-carried").inner_text()
            assert "your invitation carries this value" in shown and str(value) in shown
            assert page.locator("#q1-input").count() == 0  # not asked
            page.locator("#q0-fieldset").get_by_label("Yes").check()
            follow_up = page.locator("#q2-fieldset")
            assert follow_up.is_visible() is asked
            if asked:
                follow_up.get_by_label("No").check()
            page.get_by_role("button", name="Review what will be sent").click()
            page.wait_for_selector("#review")
            page.click("#send")
            page.wait_for_selector(SENT)
            assert problems == []
        finally:
            context.close()
    stored = {s["answers"]["children_n"]: s["answers"] for s in deployment.stored(sid)}
    assert set(stored) == {0, 2}
    assert set(stored[2]) == {"smoker", "children_n", "school_drop"}
    # the condition reads a randomized answer: "not asked" is sent, randomized, all the same
    assert set(stored[0]) == {"smoker", "children_n", "school_drop"}


def test_without_an_invitation_the_page_refuses_before_asking(deployment: Any, page: Any,
                                                               tmp_path: Path) -> None:
    sid, _ = carried_survey(deployment, tmp_path)
    page.goto(deployment.page_url(sid))
    page.wait_for_selector("body[data-state=refused]")
    said = page.locator("#status").inner_text()
    assert "This survey takes children_n from your invitation" in said
    assert "open the survey from your invitation link" in said
    assert page.locator("#answers").count() == 0
    assert deployment.stored(sid) == []
    assert json.dumps(page.problems) == "[]"
