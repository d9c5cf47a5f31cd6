"""The page's asked_grid (client/web/js/asked_grid.js) equals Python's
(shared/mechanisms/asked_grid.py): a decimal follow-up on a randomized answer ("If yes: how
much?") derives the same signed params from (ε, grid, mean part, share), certifies the same
exact loss, draws the same [asked bit, report cell] from the same recorded draws, says the same
review and receipt words, and refuses tampered params.

Each case's survey has a randomized yes/no gate and the decimal under test (`relevant =
"gate"`), so its domain ends with "not asked"; the tape is what a seeded recording source
handed out while Python perturbed the answer (tests only; the page draws from
crypto.getRandomValues)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from ldpsurvey.client.review import chances, report_words
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.mechanisms.asked_grid import EXACT_CELLS, AskedGrid, choose_split
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey
from support.sources import RecordingSource

GATE = {"id": "gate", "text": "Gate?", "type": "binary", "mechanism": "binary_rr",
        "epsilon": 1.0}
# (min, max, resolution): a money amount, a fractional and negative grid, the smallest grids
# (k = 2, 5) and one whose k·cells passes EXACT_CELLS (R_d taken as R₂, the part's own loss)
GRIDS = ((0, 500, 5), (-2.5, 3, "0.1"), (0, 1, 1), (0, 1, "0.25"), (0, 20000, 10))
EPSILONS = (0.5, 2.0, 6.0)
# (mean part, share of ε): None, None is auto's choice; a named part at its chosen share or at
# a share given (a designer's params, as a canonical survey re-read carries them)
MEANS = ((None, None), ("duchi", None), ("piecewise", None), ("hybrid", None),
         ("hybrid", Fraction(1, 2)), ("piecewise", Fraction(9, 10)))
SEEDS = (1, 2, 3)


def survey_of(grid: tuple[Any, Any, Any], epsilon: float, mean: str | None = None,
              share: Fraction | None = None) -> dict[str, Any]:
    """The canonical survey; a named mean part (and share) with the params Python derives."""
    low, high, resolution = grid
    spec: dict[str, Any] = {"id": "q", "type": "decimal", "text": "If yes: how much?",
                            "relevant": "gate", "min": low, "max": high,
                            "resolution": resolution, "epsilon": epsilon}

    def read() -> Survey:
        return Survey.from_dict({"id": "asked-grid-vectors", "title": "Asked grid",
                                 "version": 1, "questions": [GATE, spec]})

    if mean is not None:
        auto = read().questions[1].spec
        try:
            chosen = choose_split(auto.k, epsilon, mean)[1] if share is None else share
        except ValueError as exc:
            raise SurveyError("params", str(exc)) from None
        spec["params"] = AskedGrid(epsilon, range(auto.k), scale=auto.scale, mean=mean,
                                   share=chosen).params()
    return read().to_dict()


def _surveys() -> Iterator[dict[str, Any]]:
    for grid in GRIDS:
        for epsilon in EPSILONS:
            for mean, share in MEANS:
                try:
                    yield survey_of(grid, epsilon, mean, share)
                except SurveyError:  # a named part that does not fit (k, ε₂): Python refuses
                    continue


def _plain(report: Any) -> list[int]:
    return [int(x) for x in report]


def build_cases() -> list[dict[str, Any]]:
    cases = []
    for survey in _surveys():
        question = survey["questions"][1]
        mech = mechanism_for(Survey.from_dict(survey).questions[1])
        low, high = question["min"], question["max"]
        for answer in (low, high, mech.scale.to_units((mech.k - 1) // 3) if mech.k > 2 else low,
                       NOT_ASKED):
            answer = answer if answer == NOT_ASKED or isinstance(answer, int | float) \
                else float(answer)
            for seed in SEEDS:
                source = RecordingSource(seed)
                report = _plain(mech.validate_report(mech.perturb(answer, source)))
                cases.append({"survey": survey, "question": question, "answer": answer,
                              "report": report,
                              "tape": [[hex(n), hex(v)] for n, v in source.tape]})
    return cases


REPLAY = """async ([root, cases]) => {
  const M = await import(root + "js/mechanisms.js");
  const K = await import(root + "js/skip_logic.js");
  const R = await import(root + "js/tapes.js");
  const failures = [];
  const built = new Map();
  cases.forEach((c, i) => {
    try {
      if (!K.skipPlan(c.survey).get("q").notAsked) throw new Error("skip plan");
      const key = JSON.stringify(c.question);
      if (!built.has(key)) built.set(key, M.mechanismFor(c.question, { notAsked: true }));
      const mech = built.get(key);
      const tape = R.tapeSource(c.tape);
      const report = mech.perturb(c.answer, tape);
      if (tape.remaining) throw new Error(`${tape.remaining} recorded draws left unused`);
      if (JSON.stringify(report) !== JSON.stringify(c.report)) {
        throw new Error(`report ${JSON.stringify(report)}, Python: ${JSON.stringify(c.report)}`);
      }
    } catch (e) {
      const q = c.question;
      failures.push(`case ${i} (${q.params.mean}, [${q.min}, ${q.max}] by ${q.resolution}, ` +
                    `ε=${q.epsilon}, ${c.answer}): ${e.name}: ${e.message}`);
    }
  });
  return failures;
}"""


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return build_cases()


def test_the_vectors_cover_every_mean_part_both_ways_of_r_d_and_not_asked(
        cases: list[dict[str, Any]]) -> None:
    questions = {id(c["survey"]): c["question"] for c in cases}.values()
    assert {q["params"]["mean"] for q in questions} == {"duchi", "piecewise", "hybrid"}
    built = [mechanism_for(Survey.from_dict(c["survey"]).questions[1])
             for c in {id(c["survey"]): c for c in cases}.values()]
    assert any(m.k * m.cells > EXACT_CELLS for m in built)
    assert any(m.k * m.cells <= EXACT_CELLS and m.default_ratio < m.mean_ratio for m in built)
    assert sum(c["answer"] == NOT_ASKED for c in cases) >= 3 * len(built)
    assert {c["report"][0] for c in cases} == {0, 1}


def test_the_page_derives_the_params_and_draws_every_python_report(
        js_page: Any, web_root_url: str, cases: list[dict[str, Any]]) -> None:
    failures: list[str] = []
    for start in range(0, len(cases), 60):
        failures += js_page.evaluate(REPLAY, [web_root_url, cases[start:start + 60]])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:20])


def test_the_review_and_receipt_say_the_same_words_on_the_page_and_the_cli(
        js_page: Any, web_root_url: str, cases: list[dict[str, Any]]) -> None:
    picked = [c for c in cases if c["question"]["min"] == 0 and c["question"]["max"] == 500]
    on_page = js_page.evaluate("""async ([root, cases]) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        return cases.map((c) => {
          const q = c.question;
          const mechanisms = new Map([[q.id, M.mechanismFor(q, { notAsked: true })]]);
          return [R.chances(q, mechanisms.get(q.id), c.answer),
                  R.sentList({ questions: [q] }, { [q.id]: c.report }, mechanisms)
                    .querySelector(".sent").textContent];
        });
    }""", [web_root_url, picked])
    for case, (page_text, page_sent) in zip(picked, on_page, strict=True):
        question = Survey.from_dict(case["survey"]).questions[1]
        mechanism = mechanism_for(question)
        assert chances(question, mechanism, case["answer"]) == page_text
        # the page adds the note it says for any decimal whose report stands outside min..max
        # (review.js "review.sentOutside"); the command line's words are the rest
        words = report_words(question, mechanism, case["report"])
        outside = not 0 <= mechanism.sent_value(case["report"][1]) <= 500
        note = (" (outside 0 to 500: that is the random noise, as expected; it is what keeps "
                "your real number private, and the survey's results allow for it)")
        assert page_sent == f"Your device sent: {words}{note if outside else ''}"
        assert "undefined" not in page_sent and "NaN" not in page_sent


def _tampered() -> list[tuple[str, dict[str, Any]]]:
    """(why, question) that Python refuses and so must the page (ManifestMismatch)."""
    question = survey_of((0, 500, 5), 2.0)["questions"][1]
    params = question["params"]
    other = "duchi" if params["mean"] != "duchi" else "hybrid"
    changes = {
        "a larger asked-bit p than ε allows": {"p": "9/10", "q": "1/10"},
        "another share of ε for the mean": {"mean_share": "1/10"},
        "a mean part the share was not derived for": {"mean": other},
        "an unknown mean part": {"mean": "laplace"},
        "a share of all of ε": {"mean_share": "1"},
        "another default": {"default": 0},
        "a larger ε₂ than the share": {"mean_epsilon": 1.9},
    }
    out = []
    for why, change in changes.items():
        q = copy.deepcopy(question)
        q["params"].update(change)
        out.append((why, q))
    return out


def test_the_page_refuses_tampered_asked_grid_params(js_page: Any, web_root_url: str) -> None:
    tampered = _tampered()
    for _why, q in tampered:
        survey = {"id": "t", "title": "T", "version": 1, "questions": [GATE, q]}
        with pytest.raises(SurveyError):
            Survey.from_dict(survey)
    results = js_page.evaluate("""async ([root, tampered]) => {
      const M = await import(root + "js/mechanisms.js");
      return tampered.map(([why, q]) => {
        try { M.mechanismFor(q, { notAsked: true }); return `${why}: accepted`; }
        catch (e) {
          return e instanceof M.ManifestMismatch ? null : `${why}: ${e.name} ${e.message}`;
        }
      }).filter((x) => x !== null);
    }""", [web_root_url, tampered])
    assert results == []


def test_the_page_refuses_asked_grid_on_a_decimal_that_is_always_asked(
        js_page: Any, web_root_url: str) -> None:
    q = survey_of((0, 500, 5), 2.0)["questions"][1]
    name = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      try { M.mechanismFor(q); return "accepted"; } catch (e) { return e.name; }
    }""", [web_root_url, q])
    assert name == "ManifestMismatch"
