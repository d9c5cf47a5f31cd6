"""`ldpsurvey report --crosstab ROWS COLS`: every format from --db and --server shows the numbers
the crosstab endpoint serves; bad input is a one-line error that changes nothing."""

from __future__ import annotations

import csv
import io
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
            first = served["joint"][0][0]["estimate"]
            assert f"{first * 100:.1f}%" in res.output or fmt == "html"
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
])
def test_crosstab_errors_are_one_line(answered: str, db_path: Path, args: list[str],
                                      message: str) -> None:
    before = snapshot(db_path)
    res = run("--db", str(db_path), "--survey", answered, *args)
    assert res.exit_code != 0
    assert message in res.output, res.output
    assert "Traceback" not in res.output
    assert snapshot(db_path) == before
