"""The drug-use sample on the page (shared/samples/drug-use.toml and its two-server twin), in
real Chromium against real servers: checkboxes with max_selected, a follow-up on
selected(substances, 'cannabis') and one on count_selected(substances) that appear and
disappear as boxes are checked, from the keyboard alone on a phone-sized window; the page's
reports have the same shape as a CLI respondent's who checked nothing; a hidden multiselect
follow-up's "not asked" drawn as the Python client draws it; and the two-server mode."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.survey import load_survey
from ldpsurvey.shared.two_server.config import b64url
from support.clients import http_json
from support.skip import report_shape
from support.two_server import signed_survey, start_pair

ROOT = Path(__file__).resolve().parents[2]
READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"


def visible(page: Any, index: int) -> bool:
    return page.locator(f"#q{index}-fieldset").is_visible()


def test_checkboxes_and_their_follow_ups_from_the_keyboard_on_a_phone(deployment, page,
                                                                      tmp_path):
    page.set_viewport_size({"width": 360, "height": 740})
    data = load_survey(ROOT / "shared" / "samples" / "drug-use.toml").to_dict()
    deployment.server.publish(data, deployment.key, deployment.token)
    sid = data["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    assert [visible(page, i) for i in range(3)] == [True, False, False]
    keys = page.keyboard
    page.locator("#q0-0").focus()  # cannabis
    keys.press("Space")
    assert visible(page, 1) and visible(page, 2)  # both follow-ups now apply
    assert "Question 2 now applies" in page.locator("#skip-live").text_content()
    keys.press("Space")  # unchecked: both go
    assert not visible(page, 1) and not visible(page, 2)
    keys.press("Tab")  # cocaine: only the days follow-up applies
    keys.press("Space")
    assert not visible(page, 1) and visible(page, 2)
    keys.press("Shift+Tab")
    keys.press("Space")  # cannabis again
    keys.press("Tab")  # cocaine (checked)
    for _ in range(2):
        keys.press("Tab")  # ecstasy, then opioids: a fourth box is refused (max 3)
        keys.press("Space")
    assert not page.locator("#q0-3").is_checked()
    assert "at most 3" in page.locator("#q0-limit").inner_text()
    keys.press("Tab")  # into the frequency follow-up, next in the tab order
    assert page.evaluate("document.activeElement.closest('fieldset').id") == "q1-fieldset"
    keys.press("ArrowDown")  # "monthly"
    keys.press("Tab")
    keys.type("9")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.get_by_role("button", name="Review what will be sent").focus()
    keys.press("Enter")
    page.wait_for_selector("#review")
    assert "cannabis, cocaine, ecstasy" in page.locator("#review").inner_text()
    assert page.locator("#review p.skipped").count() == 0
    keys.press("Tab")
    keys.press("Enter")
    page.wait_for_selector(SENT)
    r = Respondent(deployment.server.url, state_dir=str(tmp_path / "cli"), warn=lambda m: None,
                   trust=None)
    assert r.submit(r.answer(r.fetch_survey(sid), {"substances": []})).status == "sent"
    rows = deployment.stored(sid)
    shapes = [{qid: report_shape(v) for qid, v in row["answers"].items()} for row in rows]
    assert len(shapes) == 2 and shapes[0] == shapes[1]  # the page's and the CLI's
    assert set(shapes[0]) == {"substances", "cannabis_frequency", "days_used"}
    assert page.problems == []


def test_a_multiselect_follow_up_sends_not_asked_from_the_page(deployment, page):
    data = {"id": "skip-checks", "title": "Checks", "version": 1, "questions": [
        {"id": "used", "text": "Have you used drugs this year?", "type": "binary",
         "epsilon": 1.0},
        {"id": "which", "text": "Which? (check all that apply)", "type": "multiselect",
         "options": ["cannabis", "cocaine", "ecstasy"], "max_selected": 2, "epsilon": 2.0,
         "relevant": "used"}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    page.goto(deployment.page_url("skip-checks"))
    page.wait_for_selector(READY)
    page.locator("#q0-fieldset").get_by_label("No").check()
    assert not visible(page, 1)
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    note = page.locator("#review p.skipped").inner_text()
    assert "“Which? (check all that apply)”" in note and "randomized ‘not asked’" in note
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored("skip-checks")
    assert set(stored["answers"]) == {"used", "which"}
    assert page.problems == []


@pytest.fixture(scope="module")
def pair(tmp_path_factory, browser):
    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


def test_the_two_server_sample_from_the_page(pair, page, tmp_path):
    text = (ROOT / "shared" / "samples" / "drug-use-two-server.toml").read_text()
    text = (text.replace("LEADER_HPKE_KEY", b64url(pair.leader_key))
            .replace("HELPER_HPKE_KEY", b64url(pair.helper_key))
            .replace("HELPER_URL", pair.helper.url).replace("min_batch_size = 5",
                                                            "min_batch_size = 4"))
    path = tmp_path / "survey.toml"
    path.write_text(text)
    data = load_survey(path).to_dict()
    sid = data["id"]
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    for i, answers in enumerate([{"substances": ["cannabis"], "cannabis_frequency": "daily",
                                  "days_used": 20}, {"substances": []},
                                 {"substances": ["cocaine"], "days_used": 3}]):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"s{i}"),
                       warn=lambda m: None, max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(sid), answers)).status == "sent"
    page.goto(f"{pair.leader.url}/s/{sid}")
    page.wait_for_selector(READY)
    page.get_by_label("ecstasy", exact=True).check()  # days applies, frequency does not
    assert not visible(page, 1) and visible(page, 2)
    page.get_by_label("A whole number from 0 to 30").fill("5")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    note = page.locator("#review p.skipped").inner_text()
    assert "“How often have you used cannabis in the past 12 months?”" in note
    page.click("#send")
    page.wait_for_selector(SENT)
    db = sqlite3.connect(pair.leader.db_path)
    try:
        bodies = [json.loads(row[0]) for row in db.execute(
            "SELECT body FROM ts_uploads WHERE survey_id = ?", (sid,))]
    finally:
        db.close()
    shapes = [({k: len(v) for k, v in b["public_shares"].items()}, len(b["leader_share"]),
               len(b["helper_share"])) for b in bodies]
    assert len(shapes) == 4 and all(shape == shapes[0] for shape in shapes)
    http_json("POST", pair.leader.url + f"/api/surveys/{sid}/two-server/aggregate", {},
              pair.token)
    [batch] = http_json("GET", pair.leader.url + f"/api/surveys/{sid}/two-server/batches",
                        None, pair.token)["batches"]
    doc = http_json("POST", pair.leader.url + f"/api/surveys/{sid}/two-server/batches/"
                    f"{batch['batch_id']}/collect", {}, pair.token)
    by_id = {q["question"]: q for q in doc["estimates"]["questions"]}
    assert len(by_id["substances"]["categories"]) == 4
    assert len(by_id["cannabis_frequency"]["among_asked"]["categories"]) == 4
    assert "mean" in by_id["days_used"]["among_asked"]
    assert page.problems == []
