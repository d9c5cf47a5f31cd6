"""What the respondent page asks the network for before its first question (issue 40: the
first question within 2 s on a slow phone, bench/bench_first_question.py). On a slow network
every request costs a round trip (150 ms under the bench's slow 4G) and HTTP/1.1 carries six at
a time, so the page (a) asks for everything it needs to show the questions before it has
verified the survey (the served page's hints, where.js's prefetch), never one round trip after
the check, and (b) asks for nothing only reviewing and sending need until the questions are on
screen."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from ldpsurvey.server.web_page import web_dir
from support.skip import skip_survey
from test_page_weight import SAMPLES, sample_survey

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"

# the page's files, each with when it was asked for, and the page's marks (ms from navigation)
TIMELINE = """() => ({
  files: performance.getEntriesByType("resource").filter((r) => !r.name.includes("/api/"))
    .map((r) => [r.name.split("/s/").at(-1), r.startTime]),
  marks: Object.fromEntries(performance.getEntriesByType("mark")
    .map((m) => [m.name, m.startTime])),
})"""


# Each sample's files before its first question beyond what every page asks for (every_page):
# its question types' units, the optional modules and catalogue parts it needs to show them
# (optional.js needed, wordsFor). Each file costs about 25 ms under the bench's slow 4G (150 ms
# per round of six); a module that joins this path should be one the questions cannot be shown
# without (bench/RESULTS.md, "First question on screen").
SURVEYS_OWN = {
    "designs": {"js/types/binary.js", "js/types/categorical.js", "js/designs.js",
                "js/messages/en/disclosed.js", "js/messages/en/designs.js"},
    "drug-use": {"js/types/categorical.js", "js/types/integer.js", "js/types/multiselect.js",
                 "js/geometric.js", "js/multiselect.js", "js/conditions.js", "js/skip_form.js",
                 "js/asked_geometric.js", "js/messages/en/multiselect.js",
                 "js/messages/en/skip.js"},
    "drug-use-two-server": {"js/types/categorical.js", "js/types/integer.js",
                            "js/types/multiselect.js", "js/geometric.js", "js/multiselect.js",
                            "js/conditions.js", "js/skip_form.js", "js/twoserver/verify.js",
                            "js/bytes.js", "js/twoserver/flow.js", "js/twoserver/crosstabs.js",
                            "js/messages/en/multiselect.js", "js/messages/en/skip.js",
                            "js/messages/en/twoserver.js"},
    "income": {"js/types/categorical.js", "js/types/decimal.js", "js/decimal_number.js",
               "js/number_grid.js", "js/numeric_mechanisms.js", "js/square_wave.js",
               "js/messages/en/decimal.js", "js/messages/en/disclosed.js"},
    "sensitive": {"js/types/binary.js", "js/types/categorical.js", "js/types/integer.js",
                  "js/types/multiselect.js", "js/geometric.js", "js/multiselect.js",
                  "js/messages/en/multiselect.js"},
    "two-server": {"js/types/binary.js", "js/types/categorical.js", "js/types/integer.js",
                   "js/geometric.js", "js/twoserver/verify.js", "js/bytes.js",
                   "js/twoserver/flow.js", "js/twoserver/crosstabs.js",
                   "js/messages/en/twoserver.js"},
}


def every_page() -> set[str]:
    """What every page the aggregator serves asks for before its first question: index.html's
    stylesheet and scripts, the modules it hints (less api.js, whose hint that page drops:
    server/web_page.py ASKING_HINT) and the question types' common unit."""
    index = (web_dir() / "index.html").read_text(encoding="utf-8")
    named = set(re.findall(r'<(?:link rel="(?:stylesheet|modulepreload)" href|script[^>]* src)'
                           r'="((?:js|css)/[^"]+)"', index))
    return named - {"js/api.js"} | {"js/types/base.js"}


def timeline(page: Any, url: str) -> tuple[dict[str, float], dict[str, float]]:
    """Open `url` until the page is ready: when each page file was asked for, and its marks."""
    page.goto(url)
    page.wait_for_selector(READY)
    seen = page.evaluate(TIMELINE)
    return dict(seen["files"]), seen["marks"]


@pytest.mark.parametrize("sample", [path.stem for path in sorted(SAMPLES.glob("*.toml"))])
def test_what_a_sample_shows_its_questions_with_is_asked_for_before_its_signature_is_checked(
        deployment, page, sample):
    """Every file a sample's page loads before its first question is on screen was asked for
    before the survey's signature was checked (page.js mark `ldpsurvey-signature`, after which
    manifest.js loadFor loads what the verified survey needs): where.js's prefetch asks for the
    same modules and words as loadFor. A disclosed question's words (designs.toml, income.toml)
    were asked for only by loadFor: one more round trip after the check."""
    data = {**sample_survey(sample), "id": f"first-early-{sample}"}
    deployment.server.publish(data, deployment.key, deployment.token)
    files, marks = timeline(page, deployment.page_url(data["id"]))
    shown = marks["ldpsurvey-question"]
    late = sorted(name for name, start in files.items()
                  if marks["ldpsurvey-signature"] <= start < shown)
    assert late == [], late
    assert page.problems == []


@pytest.mark.parametrize("sample", [path.stem for path in sorted(SAMPLES.glob("*.toml"))])
def test_a_sample_asks_for_only_what_its_questions_need_before_they_are_shown(deployment, page,
                                                                             sample):
    """Issue 40: the files a sample's page asks for before its first question is on screen
    are exactly those the questions cannot be shown without (every_page and SURVEYS_OWN), so a
    module only reviewing or sending needs cannot slip onto the path unseen. api.js (asking a
    server for the survey, sending) was one of them on the page the aggregator serves, which
    carries its survey: it loads with the outbox now, after the questions."""
    data = {**sample_survey(sample), "id": f"first-only-{sample}"}
    deployment.server.publish(data, deployment.key, deployment.token)
    files, marks = timeline(page, deployment.page_url(data["id"]))
    shown = marks["ldpsurvey-question"]
    before = {name for name, start in files.items() if start < shown}
    expected = every_page() | SURVEYS_OWN[sample]
    assert before == expected, (sorted(before - expected), sorted(expected - before))
    assert "js/api.js" in files  # to send: loaded once the questions are on screen
    assert page.problems == []


@pytest.mark.parametrize("sample", [path.stem for path in sorted(SAMPLES.glob("*.toml"))])
def test_what_only_reviewing_and_sending_need_loads_once_the_questions_are_shown(deployment,
                                                                                 page, sample):
    """The review's "not asked" words (skip_review.js: skip logic, special values) load with
    review.js once the questions are on screen, not before them; the ε limit's view of
    declared crosstabs (twoserver/crosstabs.js) loads for a two-server survey only."""
    data = {**sample_survey(sample), "id": f"first-later-{sample}"}
    deployment.server.publish(data, deployment.key, deployment.token)
    files, marks = timeline(page, deployment.page_url(data["id"]))
    shown = marks["ldpsurvey-question"]
    for name in ("js/review.js", "js/skip_review.js", "js/outbox.js", "js/api.js"):
        assert files.get(name, shown) >= shown, (name, files.get(name), shown)
    if any("relevant" in q for q in data["questions"]):
        assert "js/skip_review.js" in files  # before the page said it was ready
    two_server = "two_server" in data
    assert ("js/twoserver/crosstabs.js" in files) == two_server, sorted(files)
    assert page.problems == []


def test_a_returning_respondent_of_a_skip_survey_sees_the_receipt_of_not_asked(deployment,
                                                                              context):
    """A survey with skip logic answered with its follow-ups not asked: the page opened again
    shows the receipt, whose "not asked" reports skip_review.js words (loaded for the receipt
    as for the review, since the questions are not shown)."""
    sid = "first-question-receipt"
    deployment.server.publish(skip_survey(sid), deployment.key, deployment.token)
    url = deployment.page_url(sid)
    tab = context.new_page()
    tab.goto(url)
    tab.wait_for_selector(READY)
    tab.locator("#q0-fieldset").get_by_label("No").check()
    tab.get_by_label("north").check()
    tab.locator("#q4-fieldset").get_by_label("No").check()
    tab.get_by_role("button", name="Review what will be sent").click()
    tab.wait_for_selector("#review")
    tab.locator("#send").click()
    tab.wait_for_selector(SENT)
    errors: list[str] = []
    again = context.new_page()
    again.on("pageerror", lambda error: errors.append(str(error)))
    again.goto(url)
    again.wait_for_selector("body[data-state=answered]")
    again.wait_for_selector("#receipt")
    shown = again.locator("#receipt").inner_text()
    # The receipt explains each randomized report: a not-asked follow-up's report says "not
    # asked" only when the randomization kept it so (freq: index 3 of its 4 values; days: an
    # asked bit of 0), which at ε = 1 both miss about one time in ten.
    sent = json.loads(again.locator("#receipt pre.wire").text_content() or "")["answers"]
    said = sent["freq"] == 3 or sent["days"][0] == 0
    assert ("not asked" in shown) == said, (sent, shown)
    assert shown.count("Your device sent") == 4, shown  # each randomized question's report
    assert "asked’ and the number" in shown, shown  # days' pair in skip_review.js's words
    assert errors == []
