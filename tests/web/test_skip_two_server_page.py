"""Skip logic on the page in the two-server mode, in real Chromium against a real leader and
helper: a follow-up that does not apply is still split and sealed as "not asked" (the leader
stores uploads of the same keys and sizes from the page and from the CLI, whatever was
answered), the review says so in plain words, and the collected batch reports the shares among
those asked."""

from __future__ import annotations

import json
import sqlite3

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.respondent import Respondent
from support.clients import http_json
from support.skip import skip_two_server
from support.two_server import signed_survey, start_pair

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
SID = "skip-2s-page"


@pytest.fixture(scope="module")
def pair(tmp_path_factory, browser):
    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


def stored_shapes(pair) -> list[tuple]:
    db = sqlite3.connect(pair.leader.db_path)
    try:
        bodies = [json.loads(row[0]) for row in db.execute(
            "SELECT body FROM ts_uploads WHERE survey_id = ?", (SID,))]
    finally:
        db.close()
    return [({k: len(v) for k, v in b["public_shares"].items()}, len(b["leader_share"]),
             len(b["helper_share"])) for b in bodies]


def test_a_follow_up_that_does_not_apply_is_sealed_as_not_asked(pair, page, tmp_path):
    data = skip_two_server(pair.helper.url, pair.helper_key, pair.leader_key, SID)
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    for i, answers in enumerate([{"smoker": True, "daily": True, "brand": "b", "packs": 3},
                                 {"smoker": False},
                                 {"smoker": True, "daily": False, "brand": "c"}]):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"s{i}"),
                       warn=lambda m: None, max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(SID), answers)).status == "sent"
    page.goto(f"{pair.leader.url}/s/{SID}")
    page.wait_for_selector(READY)
    assert not page.locator("#q1-fieldset").is_visible()
    page.check("#q0-0")  # smoker: yes
    assert page.locator("#q1-fieldset").is_visible() and page.locator("#q2-fieldset").is_visible()
    page.check("#q0-1")  # smoker: no: the follow-ups go
    assert not page.locator("#q1-fieldset").is_visible()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    note = page.locator("#review p.skipped").inner_text()
    assert "“Daily?”; “Brand?”; “Packs a week?”" in note
    assert "split into two halves like any answer" in note
    assert page.locator("#review ol.review > li").count() == 1
    page.click("#send")
    page.wait_for_selector(SENT)
    shapes = stored_shapes(pair)
    assert len(shapes) == 4 and all(shape == shapes[0] for shape in shapes)
    http_json("POST", pair.leader.url + f"/api/surveys/{SID}/two-server/aggregate", {},
              pair.token)
    [batch] = http_json("GET", pair.leader.url + f"/api/surveys/{SID}/two-server/batches",
                        None, pair.token)["batches"]
    doc = http_json("POST", pair.leader.url + f"/api/surveys/{SID}/two-server/batches/"
                    f"{batch['batch_id']}/collect", {}, pair.token)
    brand = next(q for q in doc["estimates"]["questions"] if q["question"] == "brand")
    assert brand["n"] == 4 and len(brand["among_asked"]["categories"]) == 3
    assert page.problems == []


HIDDEN = "hidden-2s-page"


def test_check_all_that_apply_and_an_integer_with_local_epsilon_from_the_page(pair, page,
                                                                             tmp_path):
    """The measurements of skip logic added for two servers (a multiselect question's "not
    asked" entry, with and without ε0; an integer's local [bit, number] pair), answered on the
    page and by the CLI: the leader stores the same keys and sizes, and reports them."""
    from support.two_server import two_server_survey

    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                             survey_id=HIDDEN, min_batch=3)
    data.pop("crosstabs", None)
    data["questions"] = [
        {"id": "used", "text": "Used any?", "type": "binary", "central_epsilon": 1.0},
        {"id": "which", "text": "Which?", "type": "multiselect", "relevant": "used",
         "options": ["cannabis", "cocaine", "ecstasy"], "max_selected": 2,
         "central_epsilon": 1.0},
        {"id": "where", "text": "Where?", "type": "multiselect", "relevant": "used",
         "options": ["home", "party", "work"], "max_selected": 2, "central_epsilon": 1.0,
         "local_epsilon": 2.0, "mechanism": "psfo_grr"},
        {"id": "days", "text": "On how many days?", "type": "integer", "min": 0, "max": 30,
         "relevant": "used", "central_epsilon": 1.0, "local_epsilon": 2.0}]
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    for i, answers in enumerate([{"used": False}, {"used": True, "which": ["cocaine"],
                                                   "where": ["home"], "days": 3}]):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"h{i}"),
                       warn=lambda m: None, max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(HIDDEN), answers)).status == "sent"
    page.goto(f"{pair.leader.url}/s/{HIDDEN}")
    page.wait_for_selector(READY)
    page.check("#q0-0")  # used: yes
    page.get_by_label("cannabis", exact=True).check()
    page.get_by_label("ecstasy", exact=True).check()
    page.get_by_label("party", exact=True).check()
    page.get_by_label("A whole number from 0 to 30").fill("12")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert page.locator("#review ol.review > li").count() == 4
    page.click("#send")
    page.wait_for_selector(SENT)
    db = sqlite3.connect(pair.leader.db_path)
    try:
        bodies = [json.loads(row[0]) for row in db.execute(
            "SELECT body FROM ts_uploads WHERE survey_id = ?", (HIDDEN,))]
    finally:
        db.close()
    shapes = [({k: len(v) for k, v in b["public_shares"].items()}, len(b["leader_share"]),
               len(b["helper_share"])) for b in bodies]
    assert len(shapes) == 3 and all(shape == shapes[0] for shape in shapes)
    http_json("POST", pair.leader.url + f"/api/surveys/{HIDDEN}/two-server/aggregate", {},
              pair.token)
    [batch] = http_json("GET", pair.leader.url + f"/api/surveys/{HIDDEN}/two-server/batches",
                        None, pair.token)["batches"]
    doc = http_json("POST", pair.leader.url + f"/api/surveys/{HIDDEN}/two-server/batches/"
                    f"{batch['batch_id']}/collect", {}, pair.token)
    entries = doc["entries"]
    assert all(e["n"] == 3 and e["rejected"] == 0 for e in entries.values())
    assert entries["days"]["kind"] == "asked_pair"
    by_id = {q["question"]: q for q in doc["estimates"]["questions"]}
    assert len(by_id["which"]["among_asked"]["categories"]) == 3
    assert "mean" in by_id["days"]["among_asked"] and by_id["days"]["not_asked"]
    assert page.problems == []
