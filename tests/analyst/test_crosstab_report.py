"""`ldpsurvey report --crosstab ROWS COLS`: every format from --db and --server shows the numbers
the crosstab endpoint serves; bad input is a one-line error that changes nothing."""

from __future__ import annotations

import csv
import io
import itertools
import json
import threading
import uuid
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.crosstab_view import CrosstabReport, render_crosstab
from support.server_data import manifest, mechanisms, snapshot, survey_dict
from werkzeug.serving import make_server


def survey() -> dict[str, Any]:
    data = survey_dict("xr")
    data["questions"][1]["groups"] = {"cool": ["green", "blue"]}
    data["crosstabs"] = [["color", "smoker"]]
    return data


@pytest.fixture()
def answered(client: FlaskClient, auth: dict[str, str]) -> str:
    assert client.post("/api/surveys", json=manifest(survey()), headers=auth).status_code == 201
    mechs = mechanisms(survey())
    rng = np.random.default_rng(4)
    n = 400
    truth = {"smoker": rng.integers(0, 2, n), "color": rng.integers(0, 3, n),
             "age": rng.integers(0, 13, n)}
    reports = {q: mechs[q].perturb_many(v, rng) for q, v in truth.items()}
    items = [{"submission_id": str(uuid.uuid4()),
              "answers": {"smoker": bool(reports["smoker"][i]), "color": int(reports["color"][i]),
                          "age": int(reports["age"][i])}} for i in range(n)]
    for start in range(0, n, 100):
        response = client.post("/api/surveys/xr/submissions",
                               json={"submissions": items[start:start + 100]})
        assert response.status_code in (200, 201)
    return "xr"


@pytest.fixture()
def live(app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["report", *args])


def test_every_format_from_db_and_server(answered: str, db_path: Path, client: FlaskClient,
                                         auth: dict[str, str], live: str, token: str) -> None:
    before = snapshot(db_path)
    served = client.get("/api/surveys/xr/crosstab?rows=color&cols=age&bins=22,26",
                        headers=auth).get_json()
    for source in (["--db", str(db_path)], ["--server", live, "--token", token]):
        res = run(*source, "--survey", answered, "--crosstab", "color", "age", "--bins", "22,26",
                  "--format", "json")
        assert res.exit_code == 0, res.output
        assert json.loads(res.output) == served
        # CSV lists every number of the document.
        res = run(*source, "--survey", answered, "--crosstab", "color", "age", "--bins",
                  "22,26", "--format", "csv")
        assert res.exit_code == 0, res.output
        lines = list(csv.DictReader(io.StringIO(res.output)))
        joint = [r for r in lines if r["table"] == "joint"]
        assert len(joint) == 3 * 3
        assert float(joint[0]["estimate"]) == served["joint"][0][0]["estimate"]
        assert {r["table"] for r in lines} >= {"joint", "col_given_row", "row_given_col",
                                               "row_shares", "col_shares",
                                               "cols_mean_given_row"}
        for fmt in ("table", "md", "html"):
            res = run(*source, "--survey", answered, "--crosstab", "color", "age", "--bins",
                      "22,26", "--format", fmt)
            assert res.exit_code == 0, res.output
            assert "Favourite colour?" in res.output
            shown = [c for c in [*served["joint"][0], *served["row_shares"]]
                     if not c["too_noisy"]]
            assert f"{shown[0]['estimate'] * 100:.1f}%" in res.output or fmt == "html"
            assert "too noisy" in res.output
    assert snapshot(db_path) == before


def test_declared_source_is_used_and_said(answered: str, db_path: Path) -> None:
    res = run("--db", str(db_path), "--survey", answered, "--crosstab", "color", "smoker")
    assert res.exit_code == 0, res.output
    assert "declared crosstab aggregate" in res.output
    assert "too noisy" in res.output or "±" in res.output


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append(values.get("src") or "")
        for name in ("href", "src"):
            value = values.get(name) or ""
            if value and not value.startswith("data:"):
                self.links.append(value)


def test_html_has_two_heatmaps_and_no_external_links(answered: str, db_path: Path) -> None:
    res = run("--db", str(db_path), "--survey", answered, "--crosstab", "color", "smoker",
              "--format", "html")
    assert res.exit_code == 0
    tags = _Tags()
    tags.feed(res.output)
    assert len(tags.images) == 2 and all(s.startswith("data:image/png;base64,")
                                         for s in tags.images)
    assert tags.links == []


def test_empty_crosstab_renders_in_every_format() -> None:
    doc = {"survey": "s", "version": 1, "rows": {"question": "a", "mechanism": "grr",
                                                  "cells": ["x", "y"]},
           "cols": {"question": "b", "mechanism": "grr", "cells": [False, True]}, "n": 0,
           "confidence": 0.95, "source": "reports",
           "joint": [[{"estimate": None, "too_noisy": False}] * 2] * 2,
           "col_given_row": [[{"estimate": None, "too_noisy": False}] * 2] * 2,
           "row_given_col": [[{"estimate": None, "too_noisy": False}] * 2] * 2,
           "row_shares": [{"estimate": None}] * 2, "col_shares": [{"estimate": None}] * 2,
           "notes": []}
    for fmt in ("table", "json", "csv", "md", "html"):
        assert render_crosstab(CrosstabReport(doc), fmt)


@pytest.mark.parametrize(("args", "message"), [
    (["--crosstab", "color", "nope"], "no question 'nope'"),
    (["--crosstab", "color", "color"], "two different questions"),
    (["--crosstab", "color", "age", "--bins", "5,x"], "comma-separated"),
    (["--crosstab", "color", "age", "--bins", "99"], "do not split"),
    (["--crosstab", "smoker", "age", "--crosstab-source", "declared"], "declares no crosstab"),
    (["--bins", "1,2"], "need --crosstab"),
    (["--crosstab", "color", "smoker", "--bins", "1,2"], "bins apply to integer questions"),
    (["--crosstab", "color:warm", "smoker"], "has no group 'warm'"),
])
def test_crosstab_errors_are_one_line(answered: str, db_path: Path, args: list[str],
                                      message: str) -> None:
    before = snapshot(db_path)
    res = run("--db", str(db_path), "--survey", answered, *args)
    assert res.exit_code != 0
    assert message in res.output, res.output
    assert "Traceback" not in res.output
    assert snapshot(db_path) == before


# --- issue 17: small-n intervals, noise never shown as a value, headings ---------------------


SENSITIVE = Path(__file__).parents[2] / "shared" / "samples" / "sensitive.toml"


def sensitive_report(rows: str, cols: str, reports1: list[Any], reports2: list[Any],
                     bins: tuple[int, ...] | None = None) -> CrosstabReport:
    """A crosstab report of the sample survey from given reports (estimator as the server)."""
    import tomllib

    from ldpsurvey.shared.crosstab import estimate_crosstab, gram
    from ldpsurvey.shared.joint_features import encoder_for_question
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import Survey

    raw = tomllib.loads(SENSITIVE.read_text())
    s = Survey.from_dict(raw)
    m1, m2 = mechanism_for(s.question(rows)), mechanism_for(s.question(cols))
    e1 = encoder_for_question(s.question(rows), m1, None)
    e2 = encoder_for_question(s.question(cols), m2, bins)
    ct = estimate_crosstab(e1, e2, gram(e1, e2, np.array(reports1), np.array(reports2)))
    doc = {"survey": s.id, "version": 1, "n_submissions": len(reports1), **ct.to_dict()}
    return CrosstabReport(document=json.loads(json.dumps(doc)), survey=raw)


def test_two_identical_reports_give_no_zero_interval_in_any_format() -> None:
    """The issue's n = 2 case: `257.2% ±0.0` with std_error 0 and too_noisy false."""
    report = sensitive_report("rx_misuse", "cannabis_frequency", [1, 1], [2, 2])
    cell = report.grid("joint")[1][2]
    assert cell["estimate"] > 2.5 and cell["std_error"] > 0.5
    assert cell["std_error_method"] == "floor" and cell["too_noisy"]
    for fmt in ("table", "md", "html"):
        text = render_crosstab(report, fmt)
        assert "257.2%" not in text and "±0.0" not in text
        assert "too noisy" in text
        assert "exact variance at the estimate projected to the simplex" in text
    rows = list(csv.DictReader(io.StringIO(render_crosstab(report, "csv"))))
    joint = [r for r in rows if r["table"] == "joint" and r["row"] == "yes"
             and r["col"] == "monthly"]
    assert joint[0]["std_error_method"] == "floor" and joint[0]["too_noisy"] == "true"
    assert float(joint[0]["std_error"]) > 0.5
    assert json.loads(render_crosstab(report, "json"))["joint"][1][2]["std_error_method"] \
        == "floor"


def test_a_too_noisy_number_is_never_shown_as_a_value() -> None:
    """1002.0% ±1895.5 in a share within a row: flagged, and no text format prints it."""
    rng = np.random.default_rng(8)
    report = sensitive_report("cannabis_frequency", "drinks_last_week",
                              list(rng.integers(0, 5, 300)), list(rng.integers(-20, 50, 300)),
                              bins=(0, 5, 15))
    flagged = [c for row in report.grid("col_given_row") for c in row if c["too_noisy"]]
    assert any(abs(c["estimate"] or 0) >= 1.5 for c in flagged)  # shares far outside [0, 1]
    for cell in flagged:
        assert cell["ci_high"] - cell["ci_low"] > 1 or cell["estimate"] is None
    for fmt in ("table", "md", "html"):
        text = render_crosstab(report, fmt)
        for cell in flagged:
            if cell["estimate"] is not None and abs(cell["estimate"]) >= 1.5:
                assert f"{cell['estimate'] * 100:.1f}%" not in text, fmt


def _noisy_doc() -> dict[str, Any]:
    """One row: 'a' 20% (precise), 'b' 1002% (flagged too noisy)."""
    good = {"estimate": 0.2, "std_error": 0.01, "ci_low": 0.18, "ci_high": 0.22,
            "std_error_method": "sample", "too_noisy": False}
    bad = {"estimate": 10.02, "std_error": 9.6, "ci_low": -8.9, "ci_high": 29.0,
           "std_error_method": "sample", "too_noisy": True}
    cells = [[good, bad]]
    return {"survey": "s", "version": 1, "rows": {"question": "r", "mechanism": "grr",
                                                  "cells": ["x"]},
            "cols": {"question": "c", "mechanism": "grr", "cells": ["a", "b"]}, "n": 50,
            "confidence": 0.95, "source": "reports", "joint": cells, "col_given_row": cells,
            "row_given_col": cells, "row_shares": [good], "col_shares": [good, bad],
            "notes": []}


def test_the_heatmap_never_colours_a_too_noisy_cell() -> None:
    """The darkest blue is the precise 20% cell on the left, not the 1002% cell, which is
    grey (the legend says too noisy)."""
    import base64

    from ldpsurvey.analyst.reports.crosstab_html import NOISY_FACE, heatmap_chart, precision
    from matplotlib import colormaps
    from matplotlib.colors import to_rgb
    from matplotlib.image import imread

    png = heatmap_chart(CrosstabReport(_noisy_doc()), "joint", "Joint shares").png_base64
    pixels = imread(io.BytesIO(base64.b64decode(png)))[:, :, :3]
    keep = precision(2.0, 20.0)  # 20% ±2 on a 0-20% scale: a little paler than full colour
    darkest = 1 - keep * (1 - np.array(colormaps["Blues"](1.0)[:3]))
    grey = np.array(to_rgb(NOISY_FACE))
    dark_x = np.nonzero(np.abs(pixels - darkest).max(axis=2) < 0.02)[1]
    grey_x = np.nonzero(np.abs(pixels - grey).max(axis=2) < 0.02)[1]
    assert dark_x.size > 1000 and grey_x.size > 1000
    assert dark_x.mean() < grey_x.mean()


def test_the_heatmap_fades_a_cell_by_its_interval_width() -> None:
    """Issue 32: a row heatmap coloured a '51% ±36' cell darkest. Colour encodes the estimate
    only where it is precise: 51% ±36 on a 0-51% scale is white, 30% ±3 keeps its colour, and
    the legend says what paler means."""
    from ldpsurvey.analyst.reports.crosstab_html import heatmap_figure, precision

    wide = {"estimate": 0.51, "std_error": 0.18, "ci_low": 0.15, "ci_high": 0.87,
            "std_error_method": "sample", "too_noisy": False}
    tight = {"estimate": 0.30, "std_error": 0.015, "ci_low": 0.27, "ci_high": 0.33,
             "std_error_method": "sample", "too_noisy": False}
    doc = {**_noisy_doc(), "joint": [[wide, tight]], "col_given_row": [[wide, tight]]}
    fig = heatmap_figure(CrosstabReport(doc), "col_given_row", "Shares within each row")
    rgba = fig.axes[0].images[0].get_array()
    lightness = rgba[0, :, :3].mean(axis=1)
    assert lightness[0] > lightness[1]  # the 51% cell is paler than the 30% one
    assert np.allclose(rgba[0, 0, :3], 1.0)  # its interval spans the whole 0-51% scale
    assert precision(36.0, 51.0) == 0.0 and precision(3.0, 51.0) > 0.85
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("paler: a wider interval") for label in labels)


def test_headings_use_question_texts_and_html_names_survey_version_mechanisms() -> None:
    report = sensitive_report("rx_misuse", "cannabis_frequency", [1, 0, 1], [2, 0, 4])
    rx = "In the past 12 months, have you used a prescription drug without a prescription?"
    md = render_crosstab(report, "md")
    assert f"## Joint shares. Rows: {rx} [rx_misuse]" in md
    table = render_crosstab(report, "table")
    assert f"Rows: {rx} [rx_misuse]" in table
    html = render_crosstab(report, "html")
    assert f'{rx} <span class="qid">rx_misuse</span>' in html
    assert '<span class="qid">wellbeing-2026</span> version 1' in html
    assert "binary_rr, ε = 1" in html and "grr, ε = 1.5" in html


def test_a_declared_group_as_rows(answered: str, db_path: Path) -> None:
    res = run("--db", str(db_path), "--survey", answered, "--crosstab", "color:cool", "smoker")
    assert res.exit_code == 0, res.output
    assert "Favourite colour? (group: cool, against the rest)" in res.output
    assert "not cool" in res.output and "declared crosstab aggregate" in res.output


def test_heatmap_labels_fit_and_the_scale_is_in_percent() -> None:
    """Title, axis labels and the colorbar label lie inside the figure (they were cut off:
    "estimated share (clipped at", a title without its last letter), and the colour scale is
    in % like the cells (it was in fractions)."""
    from ldpsurvey.analyst.reports.charts import DESKTOP, PHONE
    from ldpsurvey.analyst.reports.crosstab_html import heatmap_figure

    report = sensitive_report("cannabis_frequency", "rx_misuse",
                              [int(v) for v in np.arange(4000) % 5],
                              [int(v) for v in np.arange(4000) % 2])
    for kind, size in itertools.product(("joint", "col_given_row"), (DESKTOP, PHONE)):
        fig = heatmap_figure(report, kind, "Shares within each row (each row sums to 100%)",
                             size)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = fig.bbox
        ax, bar_ax = fig.axes[0], fig.axes[1]
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, bar_ax.yaxis.label]
        assert all(t.get_text() for t in texts)
        for text in texts:
            extent = text.get_window_extent(renderer)
            assert (extent.x0 >= box.x0 - 0.5 and extent.x1 <= box.x1 + 0.5
                    and extent.y0 >= box.y0 - 0.5 and extent.y1 <= box.y1 + 0.5), \
                text.get_text()
        assert "%" in bar_ax.yaxis.label.get_text()
        shown = [c["estimate"] for row in report.grid(kind) for c in row if not c["too_noisy"]]
        assert shown
        vmax = bar_ax.get_ylim()[1]  # the colour scale's top, as the colorbar shows it
        assert vmax == pytest.approx(max(100 * max(shown), 1.0))


def test_tiny_n_says_plainly_that_n_is_too_small_and_what_n_would_do() -> None:
    """At n = 2 the tables are almost all "too noisy": one sentence says why, with the
    planner's n for every joint share within ±10 points; at n = 400 there is none."""
    from ldpsurvey.analyst.plan.rows import respondents_needed

    report = sensitive_report("rx_misuse", "cannabis_frequency", [1, 1], [2, 2])
    worst = max(c["variance_bound"] for row in report.grid("joint") for c in row) * 2
    needed = f"{respondents_needed(worst, 0.10, 0.95):,}"
    for fmt in ("table", "md", "html"):
        text = " ".join(render_crosstab(report, fmt).split())
        assert "n = 2 is too small for these cells" in text, fmt
        assert f"within ±10 points needs about {needed} respondents" in text, fmt
    rng = np.random.default_rng(5)
    big = sensitive_report("rx_misuse", "cannabis_frequency", list(rng.integers(0, 2, 20_000)),
                           list(rng.integers(0, 5, 20_000)))
    assert "too small for these cells" not in render_crosstab(big, "table")
