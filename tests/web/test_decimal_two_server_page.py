"""The respondent page answers a two-server survey with `decimal` questions, in real Chromium
against a real leader and helper (tests/support/two_server.py): the mean alone (Prio3Sum of
the grid index), the distribution alone (Prio3Histogram of the bin) and both (the Histogram +
SumVec pair), as the question's `estimate` asks (shared/two_server/fixed_point.py, the page's
js/twoserver/fixed_point.js).

The page's unit (js/types/decimal.js) builds the grid from the signed question as the Python unit
does (DecimalSpec.bin_edges: `bins` equal widths or the edges given; none without the
distribution) and rounds an answer half up as DecimalSpec.round_index: the same encoding and
measurement as shared/two_server/encoding.py for questions of each estimate, in Chromium.

Two respondents answer on the page (each its own browser profile), two with the command-line
client; the leader stores four uploads of the same keys and sizes, the helper and the leader
accept every one (none rejected), and the collected batch's noisy totals and estimates are
those of the answers kept to the resolution, half up, within the servers' noise.

Tolerance. Each released total is the true total plus both servers' noise, two independent
two-sided geometric draws at the plan's rate λ (variance 2·σ², σ² = 2α/(1 − α)², α = e^−λ, the
variance the report's standard errors count). A normal bound from that variance would
understate the geometric tails, so the tolerance t is read off the exact distribution of the
two draws' sum: the smallest t with P(|noise| > t) <= ALPHA / (the number of totals), ALPHA =
1e-6 the test's false-alarm rate for all totals together (a union bound). The page caps a
question's ε at 50, so the grids are small: λ = ε/Δ is 12.5 to 25 and t is 0 or 1.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.page_export import export_page
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.manifest import fingerprint
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.config import b64url
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from ldpsurvey.shared.two_server.noise import NoisePlan
from ldpsurvey.shared.two_server.plans import question_noise_plan
from static_server import serve_web_root
from support.clients import http_json
from support.two_server import signed_survey, start_pair

ALPHA = 1e-6
READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"
SID = "decimal-2s-page"
EPSILON = 50.0  # the page's largest ε per question (js/mechanisms.js MAX_EPSILON)

# both: grid 0, 10000, 20000 (R = 2), bins [0, 10000) and [10000, 20000]: s = 1, Δ = 4
INCOME = {"id": "income", "text": "Income last month?", "type": "decimal", "min": 0,
          "max": 20000, "resolution": 10000, "estimate": ["mean", "distribution"], "bins": 2,
          "central_epsilon": EPSILON}
# the mean: grid 0, 0.5, ..., 2 (R = 4): Prio3Sum, Δ = 4
HOURS = {"id": "hours", "text": "Hours worked?", "type": "decimal", "min": 0, "max": 2,
         "resolution": 0.5, "estimate": ["mean"], "central_epsilon": EPSILON}
# the distribution: Prio3Histogram over the designer's edges, Δ = 2
GAMBLING = {"id": "gambling", "text": "Spent on gambling?", "type": "decimal", "min": 0,
            "max": 500, "resolution": 1, "estimate": ["distribution"],
            "bins": [0, 10, 50, 100, 250, 500], "central_epsilon": EPSILON}

PAGE_ANSWERS = [{"income": "12345", "hours": "1.3", "gambling": "9.5"},
                {"income": "20000", "hours": "0.2", "gambling": "499.6"}]
CLI_ANSWERS = [{"income": 4999, "hours": 2, "gambling": 0},
               {"income": 0, "hours": 0.75, "gambling": 120}]
# Kept to the resolution, half up: income 12345 -> 10000 (j 1), 20000 (j 2), 4999 -> 0, 0;
# hours 1.3 -> 1.5 (j 3), 0.2 -> 0, 2 (j 4), 0.75 -> 1 (j 2); gambling 9.5 -> 10 (second bin),
# 499.6 -> 500 (the last bin, closed), 0 (first), 120 (fourth).
TRUE_TOTALS = {"income": [2, 2, 1 + 2 + 0 + 0],  # the bins (times s = 1), then the sum of j
               "hours": [3 + 0 + 4 + 2],
               "gambling": [1, 1, 0, 1, 1]}
N = 4


def two_draws_tolerance(plan: NoisePlan, totals: int) -> int:
    """The smallest t with P(|Z1 + Z2| > t) <= ALPHA / totals, Z1 and Z2 the two servers'
    independent draws under `plan` (P[Z = z] = (1 - α)/(1 + α)·α^|z|)."""
    alpha = math.exp(-float(plan.rate))
    reach = math.ceil(80 / float(plan.rate)) + 2  # beyond it one draw's mass is below e^-80
    z = np.arange(-reach, reach + 1)
    one = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    both = np.convolve(one, one)  # the sum, on -2·reach .. 2·reach
    size = np.abs(np.arange(-2 * reach, 2 * reach + 1))
    t = 0
    while both[size > t].sum() > ALPHA / totals:
        t += 1
    return t


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """The designer's static site, where the page is exported with an ε limit above 50."""
    root = tmp_path_factory.mktemp("site")
    with serve_web_root(root) as url:
        yield url.rstrip("/"), root


@pytest.fixture(scope="module")
def pair(tmp_path_factory, browser, site):
    started = start_pair(tmp_path_factory.mktemp("pair"), leader_args=("--allow-origin", site[0]))
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


def answer_on_the_page(browser: Any, url: str, answers: dict[str, str]) -> list[str]:
    """Answer in a fresh browser profile, review and send; the page's script errors."""
    ctx = browser.new_context()
    try:
        tab = ctx.new_page()
        tab.set_default_timeout(30_000)
        problems: list[str] = []
        tab.on("pageerror", lambda e: problems.append(str(e)))
        tab.goto(url)
        tab.wait_for_selector(READY)
        for i, key in enumerate(("income", "hours", "gambling")):
            tab.locator(f"#q{i}-input").fill(answers[key])
        tab.get_by_role("button", name="Review what will be sent").click()
        tab.wait_for_selector("#review")
        assert tab.locator("#review ol.review > li").count() == 3
        tab.click("#send")
        tab.wait_for_selector("#delivery")
        assert tab.locator("body").get_attribute("data-delivery") == "sent", (
            tab.locator("#status").inner_text(), problems)
        return problems
    finally:
        ctx.close()


def test_the_page_answers_a_decimal_two_server_survey(pair, browser, site, tmp_path):
    data = {"id": SID, "title": "Numbers", "version": 1, "collection": "two-server",
            "two_server": {"helper_url": pair.helper.url, "min_batch_size": N,
                           "helper_hpke_key": b64url(pair.helper_key),
                           "leader_hpke_key": b64url(pair.leader_key)},
            "questions": [INCOME, HOURS, GAMBLING]}
    key = Ed25519PrivateKey.generate()
    http_json("POST", pair.leader.url + "/api/surveys", signed_survey(data, key), pair.token)
    site_url, site_root = site
    export_page(SID, pair.leader.url, fingerprint(key.public_key()), site_root / SID,
                max_epsilon=3 * EPSILON)
    for answers in PAGE_ANSWERS:
        assert answer_on_the_page(browser, f"{site_url}/{SID}/index.html", answers) == []
    for i, answers in enumerate(CLI_ANSWERS):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"r{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(SID), answers)).status == "sent"
    shapes = stored_shapes(pair)
    assert len(shapes) == N and all(shape == shapes[0] for shape in shapes)

    api = lambda method, path, body=None: http_json(  # noqa: E731
        method, pair.leader.url + path, body, pair.token)
    api("POST", f"/api/surveys/{SID}/two-server/aggregate", {})
    [listed] = api("GET", f"/api/surveys/{SID}/two-server/batches")["batches"]
    batch = api("POST", f"/api/surveys/{SID}/two-server/batches/{listed['batch_id']}/collect",
                {})
    entries = batch["entries"]
    assert {k: (e["kind"], e["n"], e["rejected"]) for k, e in entries.items()} == {
        "income": ("histogram_sum", N, 0), "hours": ("sum", N, 0),
        "gambling": ("histogram", N, 0)}  # every page upload's proofs accepted

    questions = {q.id: q for q in Survey.from_dict(data).questions}
    totals = sum(len(v) for v in TRUE_TOTALS.values())
    tolerance = {k: two_draws_tolerance(question_noise_plan(questions[k]), totals)
                 for k in TRUE_TOTALS}
    assert max(tolerance.values()) <= 1  # small grids at ε = 50: a sharp check
    for key, truth in TRUE_TOTALS.items():
        found = entries[key]["noisy_sums"]
        assert len(found) == len(truth) and all(
            abs(a - b) <= tolerance[key] for a, b in zip(found, truth, strict=True)), (key, found)

    # the estimates: the mean is min + resolution·(sum of j)/n, a bin's share its count/n (the
    # pair's histogram divided by s = 1); Norm-Sub moves a share by at most the bins' summed
    # error, so B·t/n bounds it
    docs = {d["question"]: d for d in batch["estimates"]["questions"]}
    assert docs["income"]["mean"]["estimate"] == pytest.approx(
        10000 * 3 / N, abs=10000 * tolerance["income"] / N)
    assert docs["hours"]["mean"]["estimate"] == pytest.approx(
        0.5 * 9 / N, abs=0.5 * tolerance["hours"] / N)
    for key, bins in (("income", 2), ("gambling", 5)):
        shares = [b["estimate"] for b in docs[key]["distribution"]]
        assert shares == pytest.approx([c / N for c in TRUE_TOTALS[key][:bins]],
                                       abs=bins * tolerance[key] / N + 1e-12), (key, shares)
    assert "mean" not in docs["gambling"] and "distribution" not in docs["hours"]


# --- the unit's encoding and measurement, against Python's ------------------------------------

UNIT_QUESTIONS = [
    HOURS, INCOME, GAMBLING,
    {**INCOME, "resolution": 10, "bins": 3},  # widths 20000/3: edges off the grid
    {"id": "temp", "text": "Temperature?", "type": "decimal", "min": -2.3, "max": 3.3,
     "resolution": 0.1, "estimate": ["mean", "distribution"],
     "bins": [-2.3, -1, 0, 1.25, 3.3], "central_epsilon": 1.0},
    {"id": "dose", "text": "Dose?", "type": "decimal", "min": 0.05, "max": 2.5,
     "resolution": 0.05, "estimate": ["distribution"], "central_epsilon": 1.0},  # default bins
]

UNIT_REPLAY = """async ([root, cases]) => {
  const { unitOf } = await import(root + "js/types/index.js");
  return cases.map(([q, answers]) => ({
    encoding: unitOf(q).encoding(q),
    measured: answers.map((a) => {
      try { return unitOf(q).measuredIndex(q, a); } catch (e) { return { refused: e.name }; }
    }),
  }));
}"""


def unit_answers(q: Any) -> list[Any]:
    """Every grid value's neighbourhood on a short grid, a sample on a long one, the ends, and
    what is refused (outside, not a number)."""
    spec = q.spec
    js = [0, 1, spec.k // 3, spec.k // 2, spec.k - 2, spec.k - 1]
    step = spec.resolution
    out: list[Any] = []
    for j in sorted(set(js)):
        x = spec.value(j)
        out += [str(x), str(x + step * 2 / 5), str(x + step / 2), str(x - step * 2 / 5)]
    return [*out, str(spec.min - step), str(spec.max + step / 10), "a lot"]


def test_the_units_measurement_is_pythons(js_page, web_root_url):
    cases, expected = [], []
    for data in UNIT_QUESTIONS:
        q = Survey.from_dict({"id": "u", "title": "U", "version": 1, "collection": "two-server",
                              "two_server": {"helper_url": "https://h.example",
                                             "min_batch_size": 2,
                                             "helper_hpke_key": b64url(bytes(32)),
                                             "leader_hpke_key": b64url(bytes([1]) * 32)},
                              "questions": [data]}).questions[0]
        answers = unit_answers(q)
        enc = question_encoding(q)
        want: dict[str, Any] = {"kind": enc.kind, "length": enc.length,
                                "max": enc.max_measurement, "offset": enc.offset}
        if enc.kind == "histogram_sum":
            want["scale"] = enc.scale
        measured: list[Any] = []
        for a in answers:
            try:
                measured.append(question_index(q, a))
            except AnswerError:
                measured.append({"refused": "AnswerError"})
        cases.append([q.to_dict(), answers])
        expected.append({"encoding": want, "measured": measured})
    assert js_page.evaluate(UNIT_REPLAY, [web_root_url, cases]) == expected
