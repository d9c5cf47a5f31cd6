"""A two-server batch at a small n (issue 32): the servers' noise dominates, and every format
says so; the mean chart's axis says what it spans; the Bhatia-Davis bound is explained."""

from __future__ import annotations

import json
import math

import pytest
from ldpsurvey.analyst.reports.charts import integer_chart
from ldpsurvey.analyst.reports.two_server import render_two_server, two_server_report
from ldpsurvey.shared.estimates import z_value
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.encoding import encodings
from ldpsurvey.shared.two_server.estimates import too_noisy_notes
from ldpsurvey.shared.two_server.noise import SERVERS
from ldpsurvey.shared.two_server.plans import key_epsilon
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch
from support.two_server_stand_ins import two_server_survey_dict

QUESTIONS = [
    {"id": "smoke", "text": "Do you smoke?", "type": "binary", "central_epsilon": 1.0},
    {"id": "drinks", "text": "Drinks last week?", "type": "integer", "min": 0, "max": 30,
     "central_epsilon": 1.0},
]
SURVEY = Survey.from_dict(two_server_survey_dict(QUESTIONS, []))


def report(n: int, drinks_sum: int, smoke_sum: int):
    encs = encodings(SURVEY)

    def entry(key: str, sums: list[int]) -> BatchEntry:
        enc = encs[key]
        return BatchEntry(key, enc.kind, tuple(sums), n, 0, key_epsilon(SURVEY, key),
                          enc.sensitivity, enc.offset)

    batch = CollectedBatch(SURVEY.id, 1, "b-1", {"smoke": entry("smoke", [smoke_sum]),
                                                 "drinks": entry("drinks", [drinks_sum])})
    return two_server_report(SURVEY, batch)


def notes_of(rep, qid: str) -> list[str]:
    return next(q["notes"] for q in rep.estimates["questions"] if q["question"] == qid)


def test_at_n_5_every_format_says_the_estimates_are_too_noisy() -> None:
    rep = report(5, -120, 2)  # the noise pushed the mean to -24 with answers 0 to 30
    for qid in ("smoke", "drinks"):
        assert any(note.startswith("too noisy: at n = 5") for note in notes_of(rep, qid))
    for fmt in ("table", "md", "html", "json"):
        flat = " ".join(render_two_server(rep, fmt).split())
        assert "the whole range a respondent could give (0 to 30)" in flat, fmt
        assert "100 percentage points (every share there is)" in flat, fmt


def test_at_a_large_n_there_is_no_too_noisy_note() -> None:
    rep = report(50_000, 50_000 * 7, 12_000)
    assert not any("too noisy" in note for qid in ("smoke", "drinks")
                   for note in notes_of(rep, qid))


def test_the_criterion_is_the_noise_interval_against_the_range() -> None:
    z = z_value(0.95)
    span = 30.0
    at = span / (2 * z)  # the noise's interval alone exactly as wide as the range
    assert too_noisy_notes(at, span, 5, z, 0.95, "of the mean", "x")
    assert too_noisy_notes(at * (1 - 1e-9), span, 5, z, 0.95, "of the mean", "x") == []
    # the respondents it names bring the noise's part of the interval to a tenth of the range
    [note] = too_noisy_notes(3 * at, span, 5, z, 0.95, "of the mean", "x")
    needed = int(note.split("about ")[1].split(" respondents")[0].replace(",", ""))
    assert 2 * z * (3 * at) * 5 / needed <= span / 10 < 2 * z * (3 * at) * 5 / (needed - 1)


def test_the_mean_notes_criterion_uses_both_servers_noise() -> None:
    rep = report(5, -120, 2)
    drinks = next(q for q in rep.estimates["questions"] if q["question"] == "drinks")
    noise_se = math.sqrt(SERVERS * drinks["noise"]["variance"]) / 5
    assert 2 * z_value(0.95) * noise_se >= 30  # what the note says, from the stored plan


@pytest.mark.parametrize(("n", "total", "widened"), [(5, -120, True), (50_000, 350_000, False)])
def test_the_mean_chart_says_what_its_axis_spans(n: int, total: int, widened: bool) -> None:
    view = next(q for q in report(n, total, 2).questions() if q.id == "drinks")
    figure = integer_chart(view, None)
    assert figure is not None
    ax = figure.axes[0]
    label = ax.get_xlabel()
    assert "answers one could give: 0 to 30" in label
    assert "whole range a respondent could give" not in label
    lo, hi = ax.get_xlim()
    assert (lo < -1 or hi > 31) == widened  # the axis reaches past 0..30 only when it says so
    assert ("the axis runs" in label) == widened


def test_the_bhatia_davis_bound_is_explained_in_plain_words() -> None:
    [note] = [n for n in notes_of(report(5, -120, 2), "drinks") if "Bhatia-Davis" in n]
    assert "not their squares" in note
    assert "as if every answer were the lowest or the highest possible" in note
    assert "wider than needed, never narrower" in note
    json.dumps(note)
