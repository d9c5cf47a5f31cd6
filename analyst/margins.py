"""Population totals for calibration, from the analyst's CSV files, on disclosed questions.

`--poststratify CELLS.csv`: one column per disclosed question, then `total`; one row per cell
(a combination of answers), its population count:

    region,sex,total
    north,female,52000
    north,male,49000

`--rake MARGINS.csv` and `--calibrate MARGINS.csv`: long format, one row per category:

    question,value,total
    region,north,101000
    region,south,99000
    age_band,18-29,60000

Raking takes each question as a margin; linear calibration takes each categorical question's
categories, and for a disclosed integer question one row with an empty value: the population
total of the answer (then the population size is needed too: a row `(population),,N`, unless a
categorical margin gives it). Values are the answers as reports show them: option labels,
yes/no, integers. Every category that respondents gave needs a total, and a total > 0 needs
respondents (an empty cell): the design library (shared/design/calibration.py) checks those,
that margins sum alike, convergence (with the iteration count) and bounds.

Only disclosed questions are calibration variables: a randomized answer is refused with the
reason (`require_disclosed`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.design import (
    Coded,
    Design,
    Margin,
    calibrate,
    model_matrix,
    poststratify,
    rake,
    require_disclosed,
)
from ldpsurvey.shared.design_frame import MAX_POPULATION
from ldpsurvey.shared.errors import CalibrationError

from .design.data import Respondents, SurveyVersion, answer_texts

POPULATION = "(population)"
TOTAL = "total"
MAX_ROWS = 100_000
METHODS = ("poststratify", "rake", "calibrate")


@dataclass(frozen=True)
class Calibration:
    """What to calibrate to: the method, its totals file, and for linear calibration the
    bounds on the g-weights (None: unbounded)."""

    method: str
    path: Path
    bounds: tuple[float, float] | None = None
    max_iterations: int | None = None

    def describe(self) -> str:
        return f"{self.method} to {self.path.name}"


def parse_bounds(text: str | None) -> tuple[float, float] | None:
    """'lo,hi' -> (lo, hi) with lo < 1 < hi (g = 1 leaves a weight unchanged)."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        lower, upper = float(parts[0]), float(parts[1])
    except ValueError:
        raise CalibrationError(f"--bounds must be two numbers LO,HI, got {text!r}") from None
    if not (lower < 1 < upper) or math.isnan(lower) or math.isnan(upper):
        raise CalibrationError(f"--bounds {text}: need LO < 1 < HI (a g-weight of 1 leaves a "
                               "weight unchanged)")
    return lower, upper


def calibrated(design: Design, calibration: Calibration, version: SurveyVersion,
               respondents: Respondents) -> Design:
    """The design calibrated to the totals in the calibration's file."""
    text = _read(calibration.path)
    name = calibration.path.name
    rounds = {} if calibration.max_iterations is None else {
        "max_iterations": calibration.max_iterations}
    if calibration.method == "poststratify":
        questions, totals = _cells(text, name)
        cells = _answers(version, respondents, questions, name)
        labels = cells[0] if len(cells) == 1 else [
            _cell_label(questions, row) for row in zip(*cells, strict=True)]
        margin = Margin(" × ".join(questions), labels,
                        {_cell_label(questions, key): total for key, total in totals.items()})
        return poststratify(design, margin)
    margins = _long(text, name)
    if calibration.method == "rake":
        if POPULATION in margins:
            raise CalibrationError(f"{name}: {POPULATION} is for --calibrate; raking takes "
                                   "the population size from the margins")
        return rake(design, _margins(version, respondents, margins, name), **rounds)
    return _linear(design, calibration, version, respondents, margins, name, rounds)


def _linear(design: Design, calibration: Calibration, version: SurveyVersion,
            respondents: Respondents, margins: dict[str, dict[str, float]], name: str,
            rounds: Mapping[str, int]) -> Design:
    population = margins.pop(POPULATION, None)
    numeric = {q: t for q, t in margins.items() if "" in t}
    categorical = {q: t for q, t in margins.items() if "" not in t}
    for q, t in numeric.items():
        if len(t) != 1:
            raise CalibrationError(f"{name}: {q!r} has an empty value (the total of an integer "
                                   "answer) and categories too: give one or the other")
    cat_margins = _margins(version, respondents, categorical, name)
    n = respondents.n
    if cat_margins:
        model, totals, names = model_matrix(cat_margins, n)
        if population is not None and not math.isclose(population[""], totals[0],
                                                        rel_tol=1e-6):
            raise CalibrationError(f"{name}: {POPULATION} is {population['']:,.10g} but the "
                                   f"margins sum to {totals[0]:,.10g}; every margin counts the "
                                   "same population")
    elif population is not None:
        model, totals, names = np.ones((n, 1)), np.array([population[""]]), ["(Intercept)"]
    else:
        raise CalibrationError(f"{name}: linear calibration needs the population size: a "
                               f"categorical margin, or a row {POPULATION},,N")
    columns, extra = [model], list(totals)
    for qid, t in numeric.items():
        question = _disclosed(version, qid, name)
        if not question.unit.numeric:
            raise CalibrationError(f"{name}: {qid!r} is {question.type}: give its categories' "
                                   "totals (an empty value is the total of an integer answer)")
        present, reports = respondents.reports(qid, version.compiled.mechanisms[qid])
        if not present.all():
            raise CalibrationError(f"{int((~present).sum()):,} respondent(s) did not answer "
                                   f"{qid!r}: a calibration variable must be known for everyone")
        columns.append(reports.astype(float)[:, None])
        extra.append(t[""])
        names.append(qid)
    bounds = calibration.bounds or (-math.inf, math.inf)
    return calibrate(design, np.hstack(columns), extra, names=names, bounds=bounds, **rounds)


def _margins(version: SurveyVersion, respondents: Respondents,
             margins: Mapping[str, Mapping[str, float]], name: str) -> list[Margin]:
    out = []
    for qid, totals in margins.items():
        out.append(Margin(qid, _coded(version, respondents, qid, name), dict(totals)))
    return out


def _coded(version: SurveyVersion, respondents: Respondents, qid: str,
           name: str) -> Coded | np.ndarray:
    """Each respondent's answer to `qid` as a category number (-1: not answered) and the
    categories' texts: the distinct reports written once each by the question's unit, instead
    of a text per respondent (`_answers`, kept for reports of more than one value)."""
    question = _disclosed(version, qid, name)
    present, reports = respondents.reports(qid, version.compiled.mechanisms[qid])
    if reports.ndim != 1:
        return _answers(version, respondents, [qid], name)[0]
    values, inverse = np.unique(reports, return_inverse=True)
    codes = np.full(respondents.n, -1, dtype=np.int64)
    codes[present] = inverse.reshape(-1)
    return Coded(codes, answer_texts(question, values).tolist())


def _disclosed(version: SurveyVersion, qid: str, name: str) -> Any:
    if qid not in version.compiled.mechanisms:
        raise CalibrationError(f"{name}: survey {version.id!r} has no question {qid!r}",
                               {"question": qid})
    question = version.compiled.survey.question(qid)
    require_disclosed(question)
    return question


def _answers(version: SurveyVersion, respondents: Respondents, questions: Sequence[str],
             name: str) -> list[np.ndarray]:
    """Per question, each respondent's answer as text (None: not answered), an object array."""
    out = []
    for qid in questions:
        question = _disclosed(version, qid, name)
        present, reports = respondents.reports(qid, version.compiled.mechanisms[qid])
        texts = np.full(respondents.n, None, dtype=object)
        texts[present] = answer_texts(question, reports)
        out.append(texts)
    return out


def _cell_label(questions: Sequence[str], values: Sequence[str | None]) -> str | None:
    """A cell named by its answers, "north, female" (None: a respondent missing one)."""
    if any(v is None for v in values):
        return None
    return ", ".join(str(v) for v in values)


# --- reading the files ------------------------------------------------------------------------


def _read(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise CalibrationError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CalibrationError(f"{path} is not UTF-8 text") from None
    try:
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO(text, newline=""))]
    except csv.Error as exc:
        raise CalibrationError(f"{path.name}: not valid CSV ({exc})") from None
    rows = [r for r in rows if any(r)]
    if len(rows) > MAX_ROWS:
        raise CalibrationError(f"{path.name}: more than {MAX_ROWS:,} rows")
    if not rows:
        raise CalibrationError(f"{path.name}: empty; expected a header line")
    return rows


def _number(text: str, name: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CalibrationError(f"{name} line {line}: total {text[:40]!r} is not a number") \
            from None
    if not math.isfinite(value) or value < 0:
        raise CalibrationError(f"{name} line {line}: total must be a finite number >= 0, got "
                               f"{text!r}")
    if value > MAX_POPULATION:
        raise CalibrationError(f"{name} line {line}: total {text} is above {MAX_POPULATION:g}")
    return value


def _check_width(row: list[str], width: int, name: str, line: int) -> None:
    if len(row) != width:
        raise CalibrationError(f"{name} line {line}: {len(row)} fields, the header has {width}")


def _cells(rows: list[list[str]], name: str) -> tuple[list[str], dict[tuple[str, ...], float]]:
    """(questions, cell -> total) of a post-stratification file."""
    header = rows[0]
    if len(header) < 2 or header[-1] != TOTAL:
        raise CalibrationError(f"{name}: the header must be the disclosed question(s) of the "
                               f"cells, then {TOTAL!r} (e.g. region,sex,total)")
    questions = header[:-1]
    if len(set(questions)) != len(questions):
        raise CalibrationError(f"{name}: a question is named twice in the header")
    totals: dict[tuple[str, ...], float] = {}
    for line, row in enumerate(rows[1:], start=2):
        _check_width(row, len(header), name, line)
        key = tuple(row[:-1])
        if key in totals:
            raise CalibrationError(f"{name} line {line}: the cell ({_cell_label(questions, key)}) "
                                   "is listed twice")
        totals[key] = _number(row[-1], name, line)
    if not totals:
        raise CalibrationError(f"{name}: no cells (only a header)")
    return questions, totals


def _long(rows: list[list[str]], name: str) -> dict[str, dict[str, float]]:
    """question -> value -> total of a raking or calibration file."""
    if rows[0] != ["question", "value", TOTAL]:
        raise CalibrationError(f"{name}: the header must be question,value,{TOTAL} (one row per "
                               "category of each margin)")
    margins: dict[str, dict[str, float]] = {}
    for line, row in enumerate(rows[1:], start=2):
        _check_width(row, 3, name, line)
        qid, value, total = row
        if not qid:
            raise CalibrationError(f"{name} line {line}: the question is missing")
        if value in margins.get(qid, {}):
            raise CalibrationError(f"{name} line {line}: {qid} = {value!r} is listed twice")
        margins.setdefault(qid, {})[value] = _number(total, name, line)
    if not margins:
        raise CalibrationError(f"{name}: no margins (only a header)")
    return margins
