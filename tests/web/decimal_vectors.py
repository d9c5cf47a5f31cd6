"""Shared vectors proving the page's decimal questions (client/web/js/types/decimal.js,
decimal_number.js) equal to Python's (shared/question_types/decimal.py): what a typed answer is
rounded to, the index it is encoded as, the report drawn for it draw for draw, the signed
definition's canonical bytes, and the range the review states.

- Rounding: per grid (min, max, resolution), typed texts around every edge (the grid's ends,
  halfway points and a hair either side, values past min and max, many digits, signs) with
  Python's verdict: the grid value DecimalSpec.rounded gives (half up), "range" (outside
  min..max) or "number" (not a number Python reads).
- Reports: per mechanism (each mean mechanism, square_wave, and mean_and_distribution with each
  mean part) a one-question survey's canonical question, grid values as answers, the tape of
  draws a seeded recording source handed out while Python perturbed it, and the report.
"""

from __future__ import annotations

import copy
import tomllib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.question_types.decimal import _PLAIN_DECIMAL, decimal_text
from ldpsurvey.shared.survey import Survey, canonical_json
from support.sources import RecordingSource

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
# (min, max, resolution) as a designer writes them: whole, fractional, negative, a resolution
# that is not a power of ten, 15 significant digits, the largest grid.
GRIDS: tuple[tuple[Any, Any, Any], ...] = (
    (0, 20000, 10), (-2.5, 3, "0.1"), (0, 1, "0.25"), (-100, 100, 1), ("0.05", "0.95", "0.05"),
    (-999999999999999, -999999999990000, 1), (0.001, 0.002, "0.00001"), (-7, 7, "0.5"),
    (0, 65535, 1), (-1000, 1000, 0.2))
MEAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "geometric")
# Mean mechanisms for a series that send the mean alone (never a pair's part): one_bit_mean.
SERIES_MECHANISMS = ("one_bit_mean",)
MEMO_SECRET = bytes(range(32, 64))  # a fixed test secret: never a device's
SERIES = "monthly-income"
EPSILONS = (0.5, 1.0, 4.0)
SEEDS = (1, 2)
REPORT_GRIDS = (*GRIDS[:5], GRIDS[7])


def question(grid: tuple[Any, Any, Any], **keys: Any) -> dict[str, Any]:
    """The canonical question of a one-question decimal survey (as the page receives it)."""
    low, high, resolution = grid
    spec = {"id": "amount", "type": "decimal", "text": "How much?", "min": low, "max": high,
            "resolution": resolution, "epsilon": 1.0, **keys}
    data = {"id": "decimal-vectors", "title": "Decimal", "version": 1, "questions": [spec]}
    return Survey.from_dict(data).to_dict()["questions"][0]


def _survey_question(q: dict[str, Any]) -> Any:
    data = {"id": "decimal-vectors", "title": "Decimal", "version": 1, "questions": [q]}
    return Survey.from_dict(data).questions[0]


def _texts(low: Decimal, high: Decimal, step: Decimal) -> list[str]:
    """Typed answers around every edge of the grid low, low + step, ..., high."""
    k = int((high - low) / step) + 1
    hair = step / 1000
    out = ["", "abc", "1e3", "--1", "+", ".", "1.2.3", "0x10", str(low), str(high)]
    for j in sorted({0, 1, k // 3, k // 2, k - 2, k - 1}):
        value = low + j * step
        half = value + step / 2
        out += [str(value), str(half), str(half - hair), str(half + hair), str(value + hair),
                str(value - hair)]
    out += [str(low - hair), str(high + hair), str(low - step), str(high + step),
            str(low) + "0000000001", f"+{high}", f"{(low + high) / 2:.20f}"]
    if low <= 0 <= high:
        out += ["0", "-0", "-0.0", ".0", "0."]
    return list(dict.fromkeys(out))


def _verdict(spec: Any, text: str) -> dict[str, Any]:
    """What Python makes of a typed text: the rounded grid value, or why not."""
    if not _PLAIN_DECIMAL.fullmatch(text.strip()):
        return {"text": text, "error": "number"}
    try:
        value = spec.rounded(Decimal(text.strip()))
    except AnswerError:
        return {"text": text, "error": "range"}
    return {"text": text, "value": decimal_text(value),
            "index": spec.round_index(Decimal(text.strip()))}


def rounding_cases() -> list[dict[str, Any]]:
    cases = []
    for grid in GRIDS:
        q = question(grid)
        spec = _survey_question(q).spec
        cases.append({"question": q, "k": spec.k, "min": decimal_text(spec.min),
                      "max": decimal_text(spec.max),
                      "texts": [_verdict(spec, t) for t in _texts(spec.min, spec.max,
                                                                  spec.resolution)]})
    return cases


def _answers(spec: Any) -> list[str]:
    return [decimal_text(spec.value(j)) for j in sorted({0, spec.k // 2, spec.k - 1})]


def _plain(report: Any) -> Any:
    return [int(r) for r in report] if isinstance(report, list | tuple) else int(report)


def report_cases() -> list[dict[str, Any]]:
    """(question, answer, tape, report) for every mechanism a decimal question may name."""
    cases = []
    for grid in REPORT_GRIDS:
        for epsilon in EPSILONS:
            kinds = [{"mechanism": name} for name in (*MEAN_MECHANISMS, *SERIES_MECHANISMS)]
            kinds.append({"mechanism": "square_wave", "estimate": ["distribution"]})
            # both estimates: the answer sent twice, by `mechanism` and by square_wave
            kinds += [{"mechanism": name, "estimate": ["mean", "distribution"]}
                      for name in MEAN_MECHANISMS]
            for kind in kinds:
                try:
                    q = question(grid, epsilon=epsilon, **kind)
                except Exception as err:  # a mechanism that does not fit this grid at this ε
                    if "SurveyError" not in type(err).__name__:
                        raise
                    continue
                survey_question = _survey_question(q)
                mech = mechanism_for(survey_question)
                for answer in _answers(survey_question.spec):
                    for seed in SEEDS:
                        source = RecordingSource(seed)
                        report = _plain(mech.perturb(answer, source))
                        mech.validate_report(report)
                        cases.append({"question": q, "answer": answer, "report": report,
                                      "tape": [[hex(n), hex(v)] for n, v in source.tape]})
    return cases


def memo_cases() -> list[dict[str, Any]]:
    """(question, answer, memo, report, tag) of a decimal in a series, as the Python client
    memoizes it (client/hazmat_memo.py with a fixed test secret): one_bit_mean's end at its
    α-point and the end's memoized bit, and duchi's per-value memo beside it; every grid value
    of a short grid (so both sides of α), three of a long one."""
    import tempfile

    from ldpsurvey.client.hazmat_memo import SECRET_FILE, Memoizer
    from ldpsurvey.client.state import StateDir

    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / SECRET_FILE).write_bytes(MEMO_SECRET)
        memo = Memoizer(StateDir(tmp))
        for grid in ((0, 1, "0.1"), (-2.5, 3, "0.5"), (0, 20000, 10), (-7, 7, "0.5")):
            for epsilon in (0.5, 1.0, 4.0):
                for name in (*SERIES_MECHANISMS, "duchi"):
                    q = question(grid, epsilon=epsilon, mechanism=name)
                    survey_question = _survey_question(q)
                    mech = mechanism_for(survey_question)
                    spec = survey_question.spec
                    every = range(spec.k) if spec.k <= 41 else sorted({0, spec.k // 3,
                                                                      spec.k - 1})
                    for j in every:
                        answer = survey_question.unit.device_answer(
                            survey_question, decimal_text(spec.value(j)))
                        report = _plain(memo.permanent_value(mech, SERIES, q["id"], answer))
                        cases.append({"question": q, "answer": answer, "report": report,
                                      "memo": {"secret": MEMO_SECRET.hex(), "series": SERIES,
                                               "tag": memo.answer_tag(mech, SERIES, q["id"],
                                                                      answer)}})
    return cases


def canonical_cases() -> list[dict[str, str]]:
    """Surveys with decimal questions as Python signs them: the page must rebuild each byte."""
    questions = [
        {"id": "income", "type": "decimal", "text": "Income?", "min": 0, "max": 20000,
         "resolution": 10, "epsilon": 1.0},
        {"id": "hours", "type": "decimal", "text": "Hours?", "min": 0, "max": 80,
         "resolution": "0.5", "epsilon": 2.0, "estimate": ["distribution"], "bins": 8},
        {"id": "debt", "type": "decimal", "text": "Debt?", "min": -2.5, "max": 3,
         "resolution": 0.1, "epsilon": 1.5, "estimate": ["mean", "distribution"],
         "bins": [-2.5, -1, 0, 0.5, 3]},
        {"id": "spent", "type": "decimal", "text": "Spent?", "min": "0.05", "max": "0.95",
         "resolution": "0.05", "disclosed": True},
        # the designer's typical range: written where given (whole and fractional ends)
        {"id": "rent", "type": "decimal", "text": "Rent?", "min": 0, "max": 5000,
         "resolution": "0.5", "epsilon": 1.0, "typical": [300, "1250.5"]},
        {"id": "debt2", "type": "decimal", "text": "Debt?", "min": -2.5, "max": 3,
         "resolution": 0.1, "epsilon": 2.0, "estimate": ["mean", "distribution"],
         "typical": [-0.5, 0.7]},
    ]
    income = tomllib.loads((SAMPLES / "income.toml").read_text(encoding="utf-8"))
    out = [{"text": canonical_json(Survey.from_dict(income).to_dict()).decode()}]
    for q in questions:
        data = {"id": f"canonical-{q['id']}", "title": "Decimal", "version": 1,
                "questions": [q]}
        out.append({"text": canonical_json(Survey.from_dict(data).to_dict()).decode()})
    return out


def stated_range(q: dict[str, Any]) -> tuple[str, str]:
    """The lowest and highest number a report of `q`'s mechanism stands for, on the question's
    scale, rounded half away from zero to the resolution's decimal places (the review's
    words), from Python's own mechanism: each report's value (the mean mechanisms), or the
    square wave's cells (y - B)/(d - 1) of the range."""
    survey_question = _survey_question(q)
    spec = survey_question.spec
    mech = mechanism_for(survey_question)
    if q["mechanism"] == "square_wave":
        d, half = mech.d, mech.half_window
        span = Fraction(spec.max - spec.min)
        values = [Fraction(spec.min) - span * Fraction(half, d - 1),
                  Fraction(spec.max) + span * Fraction(half, d - 1)]
    else:
        # built on the indices 0..k-1 (unit 1), scaled by origin + step·index
        values = [mech.scale.origin + mech.scale.step * (mech.center + mech.half * v)
                  for v in mech.values]
        values = [min(values), max(values)]
    places = max(0, -spec.resolution.normalize().as_tuple().exponent)

    def rounded(x: Fraction) -> str:
        scaled = abs(x) * 10**places
        units = int(scaled + Fraction(1, 2))
        return decimal_text(Fraction(units if x >= 0 else -units, 10**places))

    return rounded(values[0]), rounded(values[1])


def cli_chances(q: dict[str, Any], answer: Any = None) -> str:
    """What `respond`'s review says the device sends for `q` (client/review.py chances)."""
    from ldpsurvey.client.review import chances

    survey_question = _survey_question(q)
    if answer is None:
        answer = decimal_text(survey_question.spec.value(0))
    return chances(survey_question, mechanism_for(survey_question), answer)


def refused() -> list[tuple[str, dict[str, Any]]]:
    """(why, question) the page must refuse (ManifestMismatch)."""
    pair = question((0, 20000, 10), mechanism="piecewise", estimate=["mean", "distribution"])
    assert pair["mechanism"] == "mean_and_distribution"
    out = []
    raised = copy.deepcopy(pair)
    raised["params"]["mean_epsilon"] = 0.75
    out.append(("a larger share of ε for the mean", raised))
    bolder = copy.deepcopy(pair)
    bolder["params"]["distribution_params"]["e"] = "3/1"
    out.append(("a bolder square wave", bolder))
    unknown = copy.deepcopy(pair)
    unknown["params"]["mean"] = "laplace"
    out.append(("an unknown mean part", unknown))
    wave = question((0, 1, "0.25"), mechanism="square_wave", estimate=["distribution"], bins=2)
    finer = copy.deepcopy(wave)
    finer["resolution"] = 0.125  # 9 grid values, not 5: the params no longer match
    out.append(("a finer grid than the params were derived for", finer))
    off = copy.deepcopy(wave)
    off["resolution"] = 0.3
    out.append(("a resolution that does not divide the range", off))
    past = copy.deepcopy(wave)
    past.update({"min": 0, "max": 65536, "resolution": 1})
    out.append(("more grid values than a mechanism takes", past))
    one_bit = question((0, 20000, 10), mechanism="one_bit_mean")
    keen = copy.deepcopy(one_bit)
    keen["params"]["exp_epsilon"] = "3/1"
    out.append(("a larger e^ε for one_bit_mean", keen))
    paired = copy.deepcopy(pair)
    paired["params"]["mean"] = "one_bit_mean"
    out.append(("one_bit_mean as a pair's mean part", paired))
    return out
