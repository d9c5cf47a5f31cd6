"""Without a design, `ldpsurvey report` gives today's simple-random-sample estimates: the
design-based options (docs/weights.md) add to the report formats only when asked.

The data formats (JSON, CSV, and the CSV of subgroups) are compared with
tests/data/srs_reports/, written by the report code as it was before design-based estimation
existed (main at 22e3952), from the deterministic database `build` makes (reports drawn by
numpy with a fixed seed, the hour fixed): every text, key, label and layout byte for byte,
every decimal number to 1e-9 relative (support/golden.py: numpy's and BLAS's kernels, chosen by
the CPU, move a float's last digits from one machine to another). Regenerate them only for an
intended change of today's numbers or columns (the last: an ordinal question's mean score in
the plain report and its note, shared/estimand.py):
    python tests/analyst/test_srs_reports_unchanged.py --write
The text formats (table, Markdown, HTML) change wording and layout often (other work on the
reports): for them the test checks that nothing of the design-based reports appears.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from support.golden import assert_matches_golden

EXPECTED = Path(__file__).resolve().parent.parent / "data" / "srs_reports"
HOUR = "2026-01-01T10:00:00Z"
CASES = {"report.json": ("--format", "json"), "report.csv": ("--format", "csv"),
         "by-region.csv": ("--by", "region", "--format", "csv")}
# Written by main's code at 2ef0c2e, before `report --lang` labelled crosstabs, subgroups and
# regressions (analyst/reports/language.py): without --lang they are unchanged.
LANGUAGE_CASES = {
    "crosstab.json": ("--crosstab", "smoker", "mood", "--format", "json"),
    "crosstab.csv": ("--crosstab", "smoker", "mood", "--format", "csv"),
    "crosstab-group.csv": ("--crosstab", "mood:not low", "region", "--format", "csv"),
    "by-region.json": ("--by", "region", "--format", "json")}
# Regressions (their fit iterates in BLAS), compared in the same way.
FITTED = {
    "regress.json": ("regress", "--outcome", "mood", "--level", "high", "--covariates",
                     "region", "--format", "json"),
    "regress.csv": ("regress", "--outcome", "smoker", "--covariates", "region,mood",
                    "--format", "csv")}
CASES.update(LANGUAGE_CASES)
# What only design-based reports show (analyst/reports/design_view.py).
DESIGN_TEXT = ("design:", "deff", "effective n", "Sampling design", "unweighted",
               "Where the variance comes from", "table.design", "population")


def build(path: Path) -> None:
    """The survey of tests/support/designed.py with 300 submissions drawn from a fixed seed."""
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from ldpsurvey.shared.mechanisms.base import plain
    from support import designed
    from support.server_data import manifest, sql

    app = create_app({"DATABASE": str(path), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    auth = {"Authorization": f"Bearer {create_token(store, 'golden')[1]}"}
    client = app.test_client()
    assert client.post("/api/surveys", json=manifest(designed.SURVEY),
                       headers=auth).status_code == 201
    rng = np.random.default_rng(20260101)
    mechs = designed.mechanisms()
    n = 300
    columns = {}
    for qid, mech in mechs.items():
        answers = rng.integers(0, mech.k, size=n) if qid != "drinks" else rng.poisson(4, n)
        columns[qid] = plain(mech.perturb_many(np.minimum(answers, mech.k - 1), rng))
    skipped = rng.random(n) < 0.1
    submissions = [{"submission_id": f"00000000-0000-4000-8000-{i:012d}",
                    "answers": {q: c[i] for q, c in columns.items()
                                if not (q == "drinks" and skipped[i])}} for i in range(n)]
    response = client.post("/api/surveys/wave-2026/submissions",
                           json={"submissions": submissions})
    assert response.status_code == 200, response.get_json()
    store.close()
    sql(path, "UPDATE surveys SET last_submission_hour = ?", (HOUR,))


def render(db: Path, args: tuple[str, ...]) -> str:
    """`ldpsurvey report ARGS` (or `ldpsurvey regress ...` when ARGS start with regress)."""
    from ldpsurvey.analyst.cli import cli

    command, args = (args[0], args[1:]) if args[0] == "regress" else ("report", args)
    result = CliRunner().invoke(cli, [command, "--db", str(db), "--survey", "wave-2026",
                                      *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("golden") / "srs.db"
    build(path)
    return path


@pytest.mark.parametrize("name", [*CASES, *FITTED])
def test_reports_without_a_design_are_unchanged(database: Path, name: str) -> None:
    args = CASES[name] if name in CASES else FITTED[name]
    assert_matches_golden(render(database, args),
                          (EXPECTED / name).read_text(encoding="utf-8"), name)


@pytest.mark.parametrize("args", [("--format", f) for f in ("table", "md", "html")]
                         + [("--by", "region", "--format", f) for f in ("table", "md", "html")])
def test_text_reports_without_a_design_show_nothing_of_one(database: Path,
                                                           args: tuple[str, ...]) -> None:
    text = re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,", render(database, args))  # charts' bytes
    assert "Do you smoke?" in text
    assert not [t for t in DESIGN_TEXT if t in text]


if __name__ == "__main__" and "--write" in sys.argv:
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    EXPECTED.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "srs.db"
        build(db)
        for case, args in {**CASES, **FITTED}.items():
            (EXPECTED / case).write_text(render(db, args), encoding="utf-8")
    print(f"wrote {len(CASES) + len(FITTED)} expected reports to {EXPECTED}")
