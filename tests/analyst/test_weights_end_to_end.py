"""Issue 35's "done when", end to end with real parts: a real `ldpsurvey serve`, the designer's
real `keys generate` and `publish`, the operator's `invites create --design` loading a frame
with weights, strata, PSUs and an fpc into the invitation codes, respondents answering with the
real client (each answer randomized with the OS CSPRNG, sent with their code only), and the
analyst's `report --server ... --rake margins.csv`, whose numbers R's survey package reproduces
from `export --server ... --rake margins.csv`; the report says how much of each estimate's
variance the design costs and how much the privacy costs."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from ldpsurvey.client import Respondent
from support import designed
from support.clients import RealServer, ldpsurvey_exe
from support.r_oracle import run_r
from support.timeouts import TEST_TIMEOUT

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")


def run(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ldpsurvey_exe(), *(str(a) for a in args)], capture_output=True,
                          text=True, timeout=TEST_TIMEOUT, check=False)


@pytest.fixture(scope="module")
def fielded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("fielded")
    db = root / "server.db"
    server = RealServer(db)
    server.start()
    try:
        token = server.token()
        assert run("keys", "generate", "--out", root / "keys").returncode == 0
        survey = root / "survey.json"
        survey.write_text(json.dumps(designed.SURVEY))
        published = run("publish", survey, "--server", server.url, "--token", token,
                        "--key", root / "keys" / "survey-signing.key")
        assert published.returncode == 0, published.stderr
        # The operator loads the frame into the invitation codes; the ids stay with them.
        units = designed.population_frame()
        frame = designed.write(root / "frame.csv", designed.frame_csv(units))
        created = run("invites", "create", "--db", db, "--survey", designed.SURVEY["id"],
                      "--design", frame)
        assert created.returncode == 0, created.stderr
        codes = {r["id"]: r["code"] for r in csv.DictReader(io.StringIO(created.stdout))}
        # Respondents answer on their own devices with the real client.
        pick = random.Random(35)  # who responds: a simulation choice, not a report
        responded = [u for u in units if pick.random() < 0.85]
        first = Respondent(server.url, state_dir=str(root / "devices" / "0"),
                           trust=str(root / "keys" / "survey-signing.pub"))
        verified = first.fetch_survey(designed.SURVEY["id"])
        for i, unit in enumerate(responded):
            device = first if i == 0 else Respondent(
                server.url, state_dir=str(root / "devices" / str(i)),
                trust=str(root / "keys" / "survey-signing.pub"))
            sent = device.submit(device.answer(verified, unit.answers, invite=codes[unit.id]))
            assert sent.status == "sent", sent
        margins = designed.write(root / "margins.csv", MARGINS)
        yield {"server": server, "token": token, "root": root, "margins": margins,
               "responded": responded, "units": units}
    finally:
        server.stop()


def analyst(fielded: dict[str, Any], command: str, *args: Any) -> subprocess.CompletedProcess:
    result = run(command, "--server", fielded["server"].url, "--token", fielded["token"],
                 "--survey", designed.SURVEY["id"], "--rake", fielded["margins"], *args)
    assert result.returncode == 0, result.stderr
    return result


def _rows(doc: dict[str, Any], qid: str) -> list[tuple[float, float]]:
    """(estimate, std error) in the export's column order: options, the mean score
    (ordinal), declared groups; an integer question's mean."""
    q = next(q for q in doc["questions"] if q["question"] == qid)
    if q.get("categories") is None:
        return [(q["mean"]["estimate"], q["mean"]["std_error"])]
    out = [(c["estimate"], c["std_error"]) for c in q["categories"]]
    if q.get("mean"):
        out.append((q["mean"]["estimate"], q["mean"]["std_error"]))
    return out + [(g["estimate"], g["std_error"]) for g in q.get("groups") or []]


def test_r_reproduces_the_raked_report_from_the_export(fielded: dict[str, Any]) -> None:
    doc = json.loads(analyst(fielded, "report", "--format", "json").stdout)
    design = doc["design"]
    assert design["strata"] == 4 and design["psus"] == 24 and design["fpc"]
    assert design["calibration"][0].startswith("raked to region, sex")
    n, invited = len(fielded["responded"]), len(fielded["units"])
    assert doc["n_submissions"] == n
    assert design["source"] == (f"the invitation codes' designs ({n:,} of {invited:,} invited "
                                "units responded)")
    out = fielded["root"] / "export"
    analyst(fielded, "export", "--out", out)
    stem = f"{designed.SURVEY['id']}-v1"
    script = (out / f"{stem}.R").read_text()
    files = {f"{stem}.csv": (out / f"{stem}.csv").read_text()}
    r = run_r(script + "\nemit(list(" + ", ".join(
        f'{q} = c(ldp_results[["{q}"]]$estimate, ldp_results[["{q}"]]$std_error)'
        for q in ("smoker", "mood", "drinks")) + "))\n", {}, files=files)
    for qid in ("smoker", "mood", "drinks"):
        expected = _rows(doc, qid)
        m = len(expected)
        assert len(r[qid]) == 2 * m
        for j, (estimate, se) in enumerate(expected):
            assert r[qid][j] == pytest.approx(estimate, abs=1e-8), (qid, j)
            assert r[qid][m + j] == pytest.approx(se, rel=1e-7), (qid, j)


def test_a_statistician_reads_what_the_design_and_the_privacy_cost(
        fielded: dict[str, Any]) -> None:
    """Per randomized estimate: deff = sampling × privacy, and the variance's shares (what a
    simple random sample of true answers would have, what the design adds, what the privacy
    adds) summing to 100%, in the table and the HTML page."""
    from ldpsurvey.analyst.reports.design_view import deff_text, variance_shares

    doc = json.loads(analyst(fielded, "report", "--format", "json").stdout)
    split = []
    for q in doc["questions"]:
        if q["mechanism"] == "disclosed":
            continue
        for row in [*(q.get("categories") or []), *([q["mean"]] if q.get("mean") else [])]:
            shares = variance_shares(row["deff"])
            if shares is not None:
                split.append((q["question"], row, shares))
                assert sum(shares) == pytest.approx(1.0, abs=1e-12)
                assert shares[2] > 0  # randomized answers always cost variance
    # At these n and ε the answers' spread shows through the noise for most estimates (a
    # "–" where it does not is the documented outcome, not an error).
    assert len(split) >= 4
    table = analyst(fielded, "report").stdout
    assert "deff = sampling × privacy" in table and "effective n" in table
    for _, row, _ in split:
        assert deff_text(row["deff"]) in table
    html = analyst(fielded, "report", "--format", "html").stdout
    assert "Where the variance comes from" in html and "unweighted" in html
    # The split is stated in words only where its sampling factor's interval excludes 1
    # (issue 39); elsewhere the words say the data cannot split it.
    stated = [row for _, row, _ in split if row["deff"]["split_supported"]]
    assert html.count("of the variance is what a simple random sample of") >= len(stated)
    assert html.count("cannot say how much of it is the sampling design") >= len(split) - len(
        stated)
