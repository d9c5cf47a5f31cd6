"""Shared vectors proving the page's integer questions on the number grid (client/web/js/
types/integer.js with js/number_grid.js) equal to Python's (shared/question_types/integer.py
with number_grid.py): per mechanism an integer may take there (duchi, piecewise, hybrid,
one_bit_mean by name or by `auto` with estimate = ["mean"], square_wave, and
mean_and_distribution with each mean part) a one-question survey's canonical question, answers
at the range's ends and middle, the tape of draws a seeded recording source handed out while
Python perturbed it, and the report; the surveys' canonical bytes; the review's sentence."""

from __future__ import annotations

from typing import Any

from ldpsurvey.client.review import chances
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey, canonical_json
from support.sources import RecordingSource

# (min, max): a short range, one around zero, a wide amount in dollars
RANGES = ((0, 10), (-50, 49), (0, 20000))
MEAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "geometric")
EPSILONS = (0.5, 1.0, 4.0)
SEEDS = (1, 2)


def survey_data(*questions: dict[str, Any]) -> dict[str, Any]:
    return {"id": "integer-vectors", "title": "Integer", "version": 1,
            "questions": list(questions)}


def question(low: int, high: int, **keys: Any) -> dict[str, Any]:
    """The canonical question of a one-question integer survey (as the page receives it)."""
    spec = {"id": "amount", "type": "integer", "text": "How much?", "min": low, "max": high,
            "epsilon": 1.0, **keys}
    return Survey.from_dict(survey_data(spec)).to_dict()["questions"][0]


def survey_question(q: dict[str, Any]) -> Any:
    return Survey.from_dict(survey_data(q)).questions[0]


def kinds() -> list[dict[str, Any]]:
    """Every way an integer asks on the grid: a mean mechanism named (geometric only as the
    pair's part: alone it is the integer's own), auto for the mean, the distribution, and the
    pair with each mean part."""
    found: list[dict[str, Any]] = [{"mechanism": name} for name in (*MEAN_MECHANISMS[:3],
                                                                     "one_bit_mean")]
    found.append({"estimate": ["mean"]})
    found.append({"mechanism": "square_wave", "estimate": ["distribution"], "bins": 4})
    # both estimates: the answer sent twice, by `mechanism` and by square_wave
    found += [{"mechanism": name, "estimate": ["mean", "distribution"]}
              for name in MEAN_MECHANISMS]
    return found


def _plain(report: Any) -> Any:
    return [int(r) for r in report] if isinstance(report, list | tuple) else int(report)


def report_cases() -> list[dict[str, Any]]:
    """(question, answer, tape, report) for every kind, range and ε that fits."""
    cases = []
    for low, high in RANGES:
        for epsilon in EPSILONS:
            for kind in kinds():
                try:
                    q = question(low, high, epsilon=epsilon, **kind)
                except Exception as err:  # a mechanism that does not fit this range at this ε
                    if "SurveyError" not in type(err).__name__:
                        raise
                    continue
                mech = mechanism_for(survey_question(q))
                for answer in sorted({low, (low + high) // 2, high}):
                    for seed in SEEDS:
                        source = RecordingSource(seed)
                        report = _plain(mech.perturb(answer, source))
                        mech.validate_report(report)
                        cases.append({"question": q, "answer": answer, "report": report,
                                      "tape": [[hex(n), hex(v)] for n, v in source.tape]})
    return cases


def canonical_cases() -> list[str]:
    """Surveys with integer questions on the grid as Python signs them: the page must rebuild
    each byte (and an integer without the keys, whose bytes are as before)."""
    texts = []
    for keys in ({}, {"mechanism": "duchi"}, {"estimate": ["mean"]},
                 {"estimate": ["distribution"], "bins": [0, 10, 100, 20000]},
                 {"estimate": ["mean", "distribution"], "bins": 8},
                 {"estimate": ["mean"], "typical": [500, 3000]}):
        data = survey_data({"id": "spent", "type": "integer", "text": "Spent?", "min": 0,
                            "max": 20000, "epsilon": 1.5, **keys})
        texts.append(canonical_json(Survey.from_dict(data).to_dict()).decode())
    return texts


def cli_chances(q: dict[str, Any], answer: int) -> str:
    """What `respond`'s review says the device sends for `q` (client/review.py chances)."""
    found = survey_question(q)
    return chances(found, mechanism_for(found), answer)
