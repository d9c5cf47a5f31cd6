"""The respondent page answers a two-server survey in real Chromium, against a real leader and
helper (tests/support/two_server.py: two processes, each with its own SQLite database).

- On a phone-sized window the page explains the mode in plain words (two organizations named,
  a noisy total only, what colluding servers could do) before anything is sent, splits and
  seals the answers on Send, and uploads ONE sealed report to the leader; the leader and the
  helper aggregate it with four CLI respondents and the analyst's collected batch counts it.
- A manifest whose helper key was swapped (signature broken) or whose signed helper key is the
  leader's is refused in the page, and nothing is sent.
- Offline at Send: the sealed upload is kept, and delivered once when the browser is online,
  byte for byte the same (never resharded).

The survey declares central ε = 1 per question (the page refuses totals above its ε limit), so
the collected sums carry noise; the batch's count of valid reports per question is exact.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.page_export import export_page
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.manifest import fingerprint
from ldpsurvey.shared.survey import canonical_json
from static_server import serve_web_root
from support.clients import http_json
from support.two_server import signed_survey, start_pair, two_server_survey
from support.web import serve_document

READY = "body[data-state=ready]"
REFUSED = "body[data-state=refused]"
SENT = "body[data-delivery=sent]"
PENDING = "body[data-delivery=pending]"
CLI_ANSWERS = [{"smoker": False, "mood": "low", "hours": 7},
               {"smoker": True, "mood": "high", "hours": 12},
               {"smoker": False, "mood": "great", "hours": 0},
               {"smoker": True, "mood": "mid"}]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A static site (the designer's own) where exported pages are hosted."""
    root = tmp_path_factory.mktemp("site")
    with serve_web_root(root) as url:
        yield url.rstrip("/"), root


@pytest.fixture(scope="module")
def pair(tmp_path_factory, browser, site):
    """start_pair's leader + helper, the leader also allowing the site's origin (CORS)."""
    started = start_pair(tmp_path_factory.mktemp("pair"), leader_args=("--allow-origin", site[0]))
    yield started
    started.stop()


def publish(pair, survey_id: str, key: Ed25519PrivateKey | None = None,
            local: bool = False) -> dict[str, Any]:
    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                             survey_id=survey_id, min_batch=5, local=local)
    body = signed_survey(data, key or Ed25519PrivateKey.generate())
    http_json("POST", pair.leader.url + "/api/surveys", body, pair.token)
    return body


def api(pair, method: str, path: str, body: Any = None) -> Any:
    return http_json(method, pair.leader.url + path, body, pair.token)


def uploads(pair, survey_id: str) -> list[str]:
    db = sqlite3.connect(pair.leader.db_path)
    try:
        return [row[0] for row in db.execute(
            "SELECT body FROM ts_uploads WHERE survey_id = ?", (survey_id,))]
    finally:
        db.close()


def posts(page: Any) -> list[Any]:
    seen: list[Any] = []
    page.on("request", lambda r: seen.append(r) if r.method == "POST" else None)
    return seen


def answer_and_review(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(READY)
    page.check("#q0-0")  # smoker: Yes
    page.get_by_label("great").check()
    page.locator("#q2-input").fill("5")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")


@pytest.mark.parametrize("local", [False, True], ids=["central-only", "local-epsilon0"])
def test_a_phone_respondent_is_split_sealed_and_counted(pair, browser, tmp_path, local):
    sid = f"web-2s-{local}".lower()
    publish(pair, sid, local=local)
    for i, answers in enumerate(CLI_ANSWERS):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"s{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(sid), answers)).status == "sent"
    phone = browser.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,
                                has_touch=True, device_scale_factor=2)
    try:
        tab = phone.new_page()
        tab.set_default_timeout(20_000)
        problems: list[str] = []
        tab.on("pageerror", lambda e: problems.append(str(e)))
        sent = posts(tab)
        tab.goto(f"{pair.leader.url}/s/{sid}")
        tab.wait_for_selector(READY)
        assert "split on this device into two sealed halves" in tab.locator(".lead").inner_text()
        intro = tab.locator("#privacy").inner_text()
        leader, helper = urlsplit(pair.leader.url).netloc, urlsplit(pair.helper.url).netloc
        assert "two meaningless halves" in intro and leader in intro and helper in intro
        assert "only a noisy total is ever revealed" in intro
        assert "If both organizations conspired" in intro and "read your answers" in intro
        if local:  # smoker and mood are randomized first (ε0 = 2), hours is not
            assert "the others stay randomized" in intro
            assert "local ε0 = 2" in tab.locator("#q0-hint").inner_text()
        answer_and_review(tab, f"{pair.leader.url}/s/{sid}")
        assert sent == [] and len(uploads(pair, sid)) == 4  # reviewing sends nothing
        width = tab.evaluate("window.innerWidth")
        assert tab.evaluate("document.documentElement.scrollWidth") <= width
        tab.screenshot(path=str(tmp_path / "phone-two-server-review.png"), full_page=True)
        tab.locator("#send").tap()
        tab.wait_for_selector(SENT)
        assert tab.evaluate("document.documentElement.scrollWidth") <= width
        tab.get_by_text("Technical details").tap()
        shown = json.loads(tab.locator("pre.wire").text_content())
        assert set(shown) == {"submission_id", "version", "public_shares", "leader_share",
                              "helper_share"}
        assert "great" not in json.dumps(shown)
        assert [p.url for p in sent] == [f"{pair.leader.url}/api/surveys/{sid}/two-server/uploads"]
        assert problems == []
    finally:
        phone.close()
    stored = [json.loads(b) for b in uploads(pair, sid)]
    assert shown in stored and len(stored) == 5
    api(pair, "POST", f"/api/surveys/{sid}/two-server/aggregate", {})
    [batch] = api(pair, "GET", f"/api/surveys/{sid}/two-server/batches")["batches"]
    collected = api(pair, "POST", f"/api/surveys/{sid}/two-server/batches/{batch['batch_id']}"
                                  "/collect", {})
    entries = collected["entries"]
    assert entries["smoker"]["n"] == 5 and entries["smoker"]["rejected"] == 0
    assert entries["mood"]["n"] == 5 and entries["hours"]["n"] == 4
    assert entries["crosstab:smoker:mood"]["n"] == 5
    assert {e["rejected"] for e in entries.values()} == {0}
    assert "mood" in {q["question"] for q in collected["estimates"]["questions"]}


def _document(pair, sid: str) -> dict[str, Any]:
    return http_json("GET", f"{pair.leader.url}/api/surveys/{sid}")


def _refused_with(page: Any, url: str, doc: dict[str, Any]) -> str:
    sent = posts(page)
    serve_document(page, urlsplit(url).path.rsplit("/", 1)[-1], lambda _: doc)
    page.goto(url)
    page.wait_for_selector(REFUSED)
    assert sent == [] and page.locator("form#answers").count() == 0
    return page.locator("#status").inner_text()


def test_a_swapped_helper_key_is_refused_and_nothing_is_sent(pair, page):
    sid = "web-2s-swapped"
    publish(pair, sid)
    doc = _document(pair, sid)
    raw = json.loads(base64.b64decode(doc["signed_bytes"]))
    raw["two_server"]["helper_hpke_key"] = base64.urlsafe_b64encode(
        bytes(32)).rstrip(b"=").decode()
    doc["signed_bytes"] = base64.b64encode(canonical_json(raw)).decode()
    text = _refused_with(page, f"{pair.leader.url}/s/{sid}", doc)
    assert "signature does not verify" in text
    assert len(uploads(pair, sid)) == 0


def test_a_signed_helper_key_equal_to_the_leaders_is_refused(pair, page):
    sid = "web-2s-same-key"
    key = Ed25519PrivateKey.generate()
    publish(pair, sid, key)
    doc = _document(pair, sid)
    raw = json.loads(base64.b64decode(doc["signed_bytes"]))
    raw["two_server"]["helper_hpke_key"] = raw["two_server"]["leader_hpke_key"]
    signed = canonical_json(raw)
    doc.update(signed_bytes=base64.b64encode(signed).decode(),
               signature=base64.b64encode(key.sign(signed)).decode())
    doc.pop("sha256", None)
    text = _refused_with(page, f"{pair.leader.url}/s/{sid}", doc)
    assert "collected by two servers" in text and "helper's key is the leader's" in text


def test_offline_then_online_delivers_the_same_sealed_upload_once(pair, context, page):
    sid = "web-2s-offline"
    publish(pair, sid)
    answer_and_review(page, f"{pair.leader.url}/s/{sid}")
    context.set_offline(True)
    page.click("#send")
    page.wait_for_selector(PENDING)
    assert "Saved on this device" in page.locator("#delivery").inner_text()
    # waiting: the receipt says what it will send, not that it sent it
    assert page.locator("#receipt-title").inner_text() == (
        "What this device will send (split and sealed)")
    assert uploads(pair, sid) == []
    shown = json.loads(page.locator("pre.wire").text_content())
    context.set_offline(False)  # the browser's "online" event resends the stored body
    page.wait_for_selector(SENT)
    assert page.locator("#receipt-title").inner_text() == "What this device sent (split and sealed)"
    [stored] = uploads(pair, sid)
    assert json.loads(stored) == shown  # the same sealed bytes: never resharded
    page.reload()
    page.wait_for_selector("body[data-state=answered]")
    assert len(uploads(pair, sid)) == 1


def test_an_exported_page_answers_a_two_server_survey(pair, site, page):
    """`page export` (the designer's own site, CORS to the leader) works in this mode too."""
    sid = "web-2s-exported"
    key = Ed25519PrivateKey.generate()
    publish(pair, sid, key)
    site_url, site_root = site
    export_page(sid, pair.leader.url, fingerprint(key.public_key()), site_root / sid)
    assert (site_root / sid / "js" / "prio3" / "vdaf.js").is_file()
    answer_and_review(page, f"{site_url}/{sid}/index.html")
    page.click("#send")
    page.wait_for_selector("#delivery")
    assert page.locator("body").get_attribute("data-delivery") == "sent", (
        page.locator("#status").inner_text(), page.problems)
    shown = json.loads(page.locator("pre.wire").text_content())
    assert [json.loads(b) for b in uploads(pair, sid)] == [shown]
    assert page.problems == []


RECORDING_ENTRY = """
import { start } from "./page.js";
import { secureSource } from "./randomness.js";
import { recordingSource } from "./tapes.js";
const source = recordingSource(secureSource);
window.ldpDraws = () => source.tape.map(([n, value]) => [n.toString(), value.toString()]);
start(source);
"""


def test_review_draws_nothing_and_send_shards_once_from_the_pages_source(pair, page):
    """Through the page's injectable source (tests/web/test_no_reroll.py's recording entry):
    reviewing draws nothing; Send draws the report id and each key's Prio3 randomness once,
    and replaying that tape through upload.js gives the stored upload's id and public shares."""
    sid = "web-2s-draws"
    body = publish(pair, sid)
    page.route("**/js/app.js", lambda route: route.fulfill(
        status=200, content_type="text/javascript; charset=utf-8", body=RECORDING_ENTRY))
    answer_and_review(page, f"{pair.leader.url}/s/{sid}")
    for _ in range(3):
        page.click("#edit")
        page.get_by_role("button", name="Review what will be sent").click()
        page.wait_for_selector("#review")
    assert page.evaluate("window.ldpDraws()") == []
    page.click("#send")
    page.wait_for_selector(SENT)
    tape = page.evaluate("window.ldpDraws()")
    assert len(tape) == 1 + 4  # the report id, then smoker, mood, hours, crosstab
    [stored] = [json.loads(b) for b in uploads(pair, sid)]
    replayed = page.evaluate("""async ([survey, tape]) => {
      const U = await import("/s/js/twoserver/upload.js");
      const R = await import("/s/js/tapes.js");
      const source = R.tapeSource(tape);
      const up = await U.buildUpload(survey, { smoker: true, mood: "great", hours: 5 },
                                     { source });
      return [up.body, source.remaining];
    }""", [body["survey"], tape])
    assert replayed[1] == 0
    assert replayed[0]["submission_id"] == stored["submission_id"]
    assert replayed[0]["public_shares"] == stored["public_shares"]


def test_a_large_central_epsilon_cannot_hide_behind_a_small_local_one(pair, page):
    """The page's ε limit (5) holds against one party (the central ε of every release: the
    questions and the declared crosstab) and, apart, against colluding servers (the ε0s), as
    client/budget.py cost_views."""
    sid = "web-2s-policy"
    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key,
                             survey_id=sid, min_batch=5, local=True)
    for q in data["questions"][:2]:
        q.update(central_epsilon=3.0, local_epsilon=1.0)  # ε0 sum 2, central 3+3+1+3 = 10
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    sent = posts(page)
    page.goto(f"{pair.leader.url}/s/{sid}")
    page.wait_for_selector(REFUSED)
    assert "costs ε = 10 in total" in page.locator("#status").inner_text()
    assert sent == []
