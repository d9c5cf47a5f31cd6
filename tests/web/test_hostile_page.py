"""Hostile manifests are refused in the browser, before anything is randomized or sent.

The page is the exported copy pinned to the designer's key (hosting mode 1), and the aggregator
is hostile: Playwright answers the page's manifest request with a crafted document. Each case
is one the CLI refuses too (client/trust.py); the page must say why, show no form and send no
request other than the manifest fetch. Then the first-use pin of the aggregator-served page.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.manifest import public_key_b64
from ldpsurvey.shared.survey import Survey, canonical_json
from support.web import serve_document

REFUSED = "body[data-state=refused]"
OTHER_KEY = Ed25519PrivateKey.generate()


def document(survey: dict[str, Any], key: Ed25519PrivateKey, *, raw: bool = False,
             **changes: Any) -> dict[str, Any]:
    """A GET /api/surveys/<id> body; `raw` signs the dict as given, not its canonical form."""
    data = survey if raw else Survey.from_dict(survey).to_dict()
    signed = canonical_json(data)
    doc = {"survey": data, "signature": base64.b64encode(key.sign(signed)).decode(),
           "public_key": public_key_b64(key.public_key()),
           "sha256": hashlib.sha256(signed).hexdigest(), "status": "open",
           "signed_bytes": base64.b64encode(signed).decode()}
    doc.update(changes)
    return doc


def tampered_bytes(survey: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    doc = document(survey, key)
    signed = base64.b64decode(doc["signed_bytes"]).replace(b'"epsilon":1.0', b'"epsilon":0.1', 1)
    return {**doc, "signed_bytes": base64.b64encode(signed).decode()}


def wrong_params(survey: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    data = copy.deepcopy(Survey.from_dict(survey).to_dict())
    data["questions"][0]["params"]["p"] = "99/100"  # much less noise than ε = 1 allows
    data["questions"][0]["params"]["q"] = "1/100"
    return document(data, key, raw=True)


def with_epsilons(*epsilons: float) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    def make(survey: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
        data = copy.deepcopy(survey)
        for question, epsilon in zip(data["questions"], epsilons, strict=True):
            question["epsilon"] = epsilon
            question.pop("params", None)
        return document(data, key)
    return make


def not_canonical(survey: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    doc = document(survey, key)
    spaced = json.dumps(Survey.from_dict(survey).to_dict(), indent=1).encode()
    return {**doc, "signature": base64.b64encode(key.sign(spaced)).decode(),
            "sha256": hashlib.sha256(spaced).hexdigest(),
            "signed_bytes": base64.b64encode(spaced).decode()}


def with_special(survey: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """A signed question whose special value ("prefer not to say") has the label of one of
    its answers, which shared/ refuses: the page refuses it by name, before randomizing."""
    data = copy.deepcopy(Survey.from_dict(survey).to_dict())
    question = next(q for q in data["questions"] if q.get("options"))
    question["special"] = {"refused": question["options"][0]}
    return document(data, key, raw=True)


CASES: dict[str, tuple[Callable[[dict[str, Any], Any], dict[str, Any]], str]] = {
    "changed after signing": (tampered_bytes, "signature does not verify"),
    "signed but not canonical": (not_canonical, "not in canonical form"),
    "unsigned": (lambda s, k: document(s, k, signature=""), "not signed"),
    "no signed bytes": (lambda s, k: {kk: v for kk, v in document(s, k).items()
                                      if kk != "signed_bytes"}, "did not send the signed bytes"),
    "another key": (lambda s, k: document(s, OTHER_KEY), "other than the one this page trusts"),
    "parameters not the question's": (wrong_params, "does not match"),
    "question above the ε limit": (with_epsilons(6.0, 1.5, 1.0), "ε = 6, above your limit of 5"),
    "total above the ε limit": (with_epsilons(2.0, 2.0, 1.5), "ε = 5.5 in total, above your limit"),
    "another survey": (lambda s, k: document({**s, "id": "other"}, k), "instead of"),
    "wrong hash": (lambda s, k: document(s, k, sha256="0" * 64), "hash does not match"),
    "special values": (with_special, "special values"),
}


def requests_of(page: Any) -> list[Any]:
    seen: list[Any] = []
    page.on("request", lambda request: seen.append(request))
    return seen


@pytest.mark.parametrize("case", sorted(CASES),
                         ids=lambda c: c.replace(" ", "-").replace("ε", "eps"))
def test_the_exported_page_refuses_a_hostile_manifest(deployment, page, case):
    survey = deployment.new_survey()
    sid = survey["id"]
    url = deployment.export(sid)  # pinned to the designer's key; the real survey checks out
    make, expected = CASES[case]
    hostile = make(survey, deployment.key)
    page.route(f"{deployment.server.url}/api/surveys/{sid}", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(hostile),
        headers={"Access-Control-Allow-Origin": deployment.site_origin}))
    seen = requests_of(page)
    page.goto(url)
    page.wait_for_selector(REFUSED)
    text = page.locator("#status").inner_text()
    assert expected in text, text
    assert "Nothing was randomized or sent" in text
    assert page.locator("form#answers").count() == 0
    to_server = [r for r in seen if r.url.startswith(deployment.server.url)]
    assert [(r.method, r.url) for r in to_server] == [
        ("GET", f"{deployment.server.url}/api/surveys/{sid}")]
    assert deployment.stored(sid) == []


def test_a_closed_survey_is_not_offered(deployment, page):
    survey = deployment.new_survey()
    doc = document(survey, deployment.key, status="closed")
    serve_document(page, survey["id"], lambda _: doc)
    page.goto(deployment.page_url(survey["id"]))
    page.wait_for_selector(REFUSED)
    assert "takes no more answers" in page.locator("#status").inner_text()


def serve_instead(page: Any, survey_id: str, doc: dict[str, Any]) -> Callable[[], None]:
    """The aggregator serves `doc` as the survey's (in its page and at its API): undo()."""
    return serve_document(page, survey_id, lambda _: doc)


def test_the_served_page_pins_the_key_on_first_use(deployment, page):
    survey = deployment.new_survey()
    sid = survey["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector("body[data-state=ready]")
    assert "key remembered" in page.locator("#content").text_content()
    assert page.locator("#fingerprint").text_content() == deployment.fingerprint
    serve_instead(page, sid, document(survey, OTHER_KEY))  # the aggregator swaps the key
    page.reload()
    page.wait_for_selector(REFUSED)
    assert "signing key changed" in page.locator("#status").inner_text()


def test_the_served_page_refuses_a_changed_or_older_version(deployment, page):
    survey = deployment.new_survey(version=2)
    sid = survey["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector("body[data-state=ready]")
    changed = copy.deepcopy(survey)
    changed["title"] = "Check-in, reworded"
    undo = serve_instead(page, sid, document(changed, deployment.key))
    page.reload()
    page.wait_for_selector(REFUSED)
    assert "seen before with different content" in page.locator("#status").inner_text()
    undo()
    serve_instead(page, sid, document({**survey, "version": 1}, deployment.key))
    page.reload()
    page.wait_for_selector(REFUSED)
    assert "older than version 2" in page.locator("#status").inner_text()
