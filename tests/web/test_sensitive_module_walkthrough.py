"""docs/sensitive-module.md as written, in real Chromium against a real `ldpsurvey serve`: the
main survey's export from the page (CSV out), its `invites create --from-export --carry ...
--odk-csv links.csv` command (codes in), the XLSForm's `pulldata` evaluated on links.csv as ODK
Collect does, the page opened from that link showing which values travel with the code before
the questions, answered and sent, and the page's `report --by region` and `regress` commands.
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.clients import http_json
from test_invite_page import requests_of, review_and_send
from test_page import fill_checkin

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "sensitive-module.md").read_text(encoding="utf-8")
READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC, re.S)


def commands() -> list[str]:
    return [line for block in blocks("sh") for line in block.splitlines()
            if line.strip() and not line.startswith("#")]


def run(line: str, deployment: Any, sid: str) -> Any:
    """One of the doc's command lines on the test's server (its database, survey id, URL)."""
    line = (line.replace("server.db", str(deployment.server.db_path))
            .replace("wellbeing", sid).replace("https://survey.example.org", deployment.server.url))
    words = shlex.split(line)
    assert words[0] == "ldpsurvey", line
    result = CliRunner().invoke(cli, words[1:])
    assert result.exit_code == 0, (line, result.output)
    return result


def pulldata(calculation: str, household: str) -> str:
    """What ODK Collect computes for the form's pulldata('file', 'column', 'key column', ${q})
    with ${q} = household: the column's value on the row of file.csv whose key column is it."""
    match = re.fullmatch(r"pulldata\('(\w+)', '(\w+)', '(\w+)', \$\{(\w+)\}\)", calculation)
    assert match, calculation
    name, column, key, _ = match.groups()
    with Path(f"{name}.csv").open(encoding="utf-8", newline="") as f:
        [row] = [r for r in csv.DictReader(f) if r[key] == household]
    return row[column]


def form_calculation() -> str:
    """The `link` row's calculation of the doc's XLSForm (the tested form file)."""
    form = (ROOT / "tests" / "data" / "sensitive_module_form.md").read_text(encoding="utf-8")
    assert blocks("md") == [form]
    for line in form.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[1:3] == ["calculate", "link"]:
            return cells[4]
    raise AssertionError("the form has no link calculation")


def test_the_walkthrough_runs_as_written(deployment: Any, page: Any, tmp_path: Path,
                                         monkeypatch: Any) -> None:
    survey = deployment.new_survey()
    sid = survey["id"]
    monkeypatch.chdir(tmp_path)
    [export] = blocks("csv")
    Path("main.csv").write_text(export, encoding="utf-8")
    lines = commands()
    assert [shlex.split(line)[1] for line in lines] == ["invites", "report", "regress"]

    # codes in: one per interview, carrying region and age band; links.csv for the form
    created = run(lines[0], deployment, sid)
    assert "3 invitation code(s)" in created.stderr and created.stdout == ""
    with open("links.csv", encoding="utf-8", newline="") as f:
        links = {row["key"]: row for row in csv.DictReader(f)}
    assert list(links) == ["HH-001", "HH-002", "HH-003"]

    # the enumerator's form: the link ODK computes for household HH-002
    link = pulldata(form_calculation(), "HH-002")
    assert link == f"{deployment.page_url(sid)}#invite={links['HH-002']['code']}"

    # the respondent: the page from the link shows what travels with the code, before answering
    seen = requests_of(page)
    page.goto(link)
    page.wait_for_selector(READY)
    assert "#" not in page.url
    notice = page.locator("#invite").inner_text()
    assert "You opened this survey from your invitation link" in notice
    assert "Your invitation carries these values from your interview" in notice
    assert [item.inner_text() for item in page.locator("#invite-carries li").all()] == [
        "region: south", "age_band: 30-44"]
    assert page.locator("#invite").bounding_box()["y"] < \
        page.get_by_label("Yes").bounding_box()["y"]  # above the questions
    fill_checkin(page)
    review_and_send(page)
    page.wait_for_selector(SENT)
    code = links["HH-002"]["code"]
    assert not any(code in request.url for request in seen)  # the code went only in bodies
    asked = [json.loads(r.post_data) for r in seen if r.url.endswith("/invitation")]
    assert asked == [{"invite": code}]
    [stored] = deployment.stored(sid)
    assert "south" not in json.dumps(stored)  # the device never sent the carried values

    # the two other households answer (a device sends randomized reports with its code)
    mechanisms = {q.id: mechanism_for(q) for q in Survey.from_dict(survey).questions}
    for household in ("HH-001", "HH-003"):
        answers = {"smoker": mechanisms["smoker"].perturb(True),
                   "mood": mechanisms["mood"].perturb(survey["questions"][1]["options"][0])}
        http_json("POST", f"{deployment.server.url}/api/surveys/{sid}/submissions",
                  {"submission_id": str(uuid.uuid4()), "version": 1, "answers": answers,
                   "invite": links[household]["code"]})

    # the analyst: by region, as the doc says
    report = run(lines[1], deployment, sid)
    assert "invitation code carried 'region'" in report.stdout
    assert "region = north (n = 2)" in report.stdout and "region = south (n = 1)" in report.stdout
    fit = run(lines[2], deployment, sid)
    assert "region=south" in fit.stdout
