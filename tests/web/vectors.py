"""Test vectors that prove the browser's randomizers (client/web/js/) equal shared/'s.

Each vector is one question as it appears in a signed manifest's canonical survey JSON, a true
answer, the tape of (n, value) draws the Python client requested while perturbing it (recorded
from a seeded deterministic source: tests only, never a report), and the report it sent. The
JS port must request the same n's in the same order and return the same report. Vectors with a
`memo` come from the client's HAZMAT memo (client/hazmat_memo.py) with a fixed test secret: the
permanent value is drawn from the HMAC stream, the tape holds the fresh instantaneous draws.
Vectors with `refused` hold questions the Python side refuses (tampered parameters, wrong
mechanism ...): the page must refuse them too.

`write_vectors(path)` also writes them as JSON for inspection (tape entries as hex strings:
the ordinal mechanism draws below integers of thousands of digits).
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ldpsurvey.client.hazmat_memo import SECRET_FILE, Memoizer
from ldpsurvey.client.state import StateDir
from ldpsurvey.shared.errors import LdpSurveyError, ReportError
from ldpsurvey.shared.exact import rational_exp_floor
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from support.sources import RecordingSource

EPSILONS = (0.01, 1.0, 50.0)  # tiny, ordinary, the largest the schema allows
SIZES = (2, 3, 16, 1024)
FREQUENCY_MECHANISMS = ("grr", "oue", "sue", "olh", "hr", "ss")
INTEGER_RANGES = ((0, 1), (0, 30), (-5, 10), (0, 1000), (-2**30, 2**30))
SEEDS = (1, 2)
LOCATION_GRIDS = ((2, 3, 1.0, 0.5), (5, 4, 0.5, 2.0), (1, 9, 0.3, 3.0), (20, 20, 1.0, 0.5),
                  (7, 7, 2.0, 0.05))
# Multiselect (options, max_selected, required_min) per mechanism: small and 64 options, the
# empty set allowed or not, m = 1, a few, all.
SET_SHAPES = ((2, 1, 0), (5, 3, 1), (5, 5, 0), (10, 2, 0), (64, 3, 1), (64, 64, 0))
SET_MECHANISMS = ("option_rr", "set_ue", "psfo_grr", "psfo_olh")
# With exclusive options (the last `n` options selected only alone): (k, m, required_min, n).
EXCLUSIVE_SHAPES = ((5, 5, 0, 2), (5, 2, 1, 1), (10, 10, 0, 2), (64, 64, 1, 2), (64, 3, 0, 1))
MEMO_SECRET = bytes(range(32))  # a fixed test secret: never a device's
SERIES = "weekly-check"


def _question(spec: dict[str, Any], series: str | None = None) -> dict[str, Any]:
    """The canonical question dict of a one-question survey built from `spec`."""
    survey = {"id": "vectors", "title": "Vectors", "version": 1, "questions": [spec]}
    if series is not None:
        survey["series"] = series
    return Survey.from_dict(survey).to_dict()["questions"][0]


def _specs() -> Iterator[dict[str, Any]]:
    for epsilon in EPSILONS:
        yield {"type": "binary", "mechanism": "binary_rr", "epsilon": epsilon}
        yield {"type": "binary", "mechanism": "grr", "epsilon": epsilon}
        for k in SIZES:
            options = [f"option {i}" for i in range(k)]
            groups = {"first two": options[:2]} if k >= 3 else {}
            for name in FREQUENCY_MECHANISMS:
                yield {"type": "categorical", "mechanism": name, "epsilon": epsilon,
                       "options": options, "groups": groups}
            yield {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": epsilon,
                   "options": options}
        yield {"type": "ordinal", "mechanism": "ss", "epsilon": epsilon,
               "options": ["never", "rarely", "sometimes", "often", "always"]}
        for low, high in INTEGER_RANGES:
            yield {"type": "integer", "mechanism": "geometric", "epsilon": epsilon,
                   "min": low, "max": high}
    # Wide ranges whose noise still stays within JSON's exact integers (past ±2^50: the bound
    # is the geometric mechanism's own, not a fixed one).
    yield {"type": "integer", "mechanism": "geometric", "epsilon": 50.0, "min": -2**50,
           "max": 2**50}
    yield {"type": "integer", "mechanism": "geometric", "epsilon": 50.0, "min": -2**51,
           "max": 2**51}
    yield from _set_specs()
    # Location questions (geo_exp): small and 20 x 20 grids, a row, regions.
    for rows, cols, km, eps_geo in LOCATION_GRIDS:
        yield {"type": "location", "epsilon_geo": eps_geo,
               "grid": {"rows": rows, "cols": cols, "cell_km": km},
               "regions": {"first row": [f"1,1-{cols}"]}}
    # The smallest ε a mechanism is built for (Mechanism.misfit): every rational grows long.
    yield {"type": "categorical", "mechanism": "grr", "epsilon": 1e-6, "options": ["a", "b"]}
    yield {"type": "integer", "mechanism": "geometric", "epsilon": 1e-6, "min": 0, "max": 10}
    yield {"type": "categorical", "mechanism": "oue", "epsilon": math.log(3),
           "options": ["ü", "日本", "a\"b", "c\\d"]}


def _set_specs() -> Iterator[dict[str, Any]]:
    """Multiselect questions (shared/mechanisms/set_choice.py), every shape a mechanism
    serves (set_ue: at most half the options)."""
    for epsilon in EPSILONS:
        for k, m, least in SET_SHAPES:
            for name in SET_MECHANISMS:
                if name == "set_ue" and 2 * m > k:
                    continue
                yield {"type": "multiselect", "mechanism": name, "epsilon": epsilon,
                       "options": [f"option {i}" for i in range(k)], "max_selected": m,
                       "required_min": least}
        for k, m, least, alone in EXCLUSIVE_SHAPES:
            for name in SET_MECHANISMS:
                free, largest = k - alone, min(m, k - alone)
                if name == "set_ue" and 2 * largest > free:
                    continue
                options = [f"option {i}" for i in range(free)] + ["none", "don't know"][-alone:]
                yield {"type": "multiselect", "mechanism": name, "epsilon": epsilon,
                       "options": options, "max_selected": m, "required_min": least,
                       "exclusive": options[free:]}


def _design_specs() -> Iterator[dict[str, Any]]:
    """The named designs (shared/mechanisms/rr_designs.py): ε left out (the exact one) or
    stated."""
    three = ["never", "once", "often"]
    yield {"type": "binary", "mechanism": "warner", "params": {"p": "3/4"}}
    yield {"type": "binary", "mechanism": "crosswise", "params": {"prevalence": "1/5"}}
    yield {"type": "binary", "mechanism": "forced_response",
           "params": {"p_truth": "2/3", "forced": {"yes": "1/6", "no": "1/6"}}}
    yield {"type": "categorical", "mechanism": "forced_response", "options": three,
           "epsilon": 3.0, "params": {"p_truth": "1/2", "forced": {
               "never": "1/4", "once": "1/8", "often": "1/8"}}}
    yield {"type": "binary", "mechanism": "unrelated_question",
           "params": {"p_truth": "3/5", "prevalence": "1/3"}}
    yield {"type": "categorical", "mechanism": "unrelated_question", "options": three,
           "params": {"p_truth": "7/10", "prevalence": {
               "never": "1/2", "once": "3/10", "often": "1/5"}}}
    yield {"type": "binary", "mechanism": "matrix",
           "params": {"matrix": [["1/2", "1/4", "1/4"], ["1/8", "3/8", "1/2"]]}}
    yield {"type": "categorical", "mechanism": "matrix", "options": three, "epsilon": 2.0,
           "params": {"matrix": [["3/5", "1/5", "1/5"], ["1/5", "3/5", "1/5"],
                                 ["1/5", "1/5", "3/5"]]}}


def _layered_specs() -> Iterator[dict[str, Any]]:
    for permanent, instantaneous in ((1.0, 0.5), (0.01, 50.0), (50.0, 0.01), (2.0, 2.0)):
        yield {"type": "binary", "mechanism": "binary_rr", "epsilon": permanent,
               "instantaneous_epsilon": instantaneous}
        for k in (2, 3, 16, 1024):
            yield {"type": "categorical", "mechanism": "grr", "epsilon": permanent,
                   "instantaneous_epsilon": instantaneous,
                   "options": [f"o{i}" for i in range(k)]}


def _memo_only_specs() -> Iterator[dict[str, Any]]:
    """Series questions without an instantaneous layer: the permanent value is the report."""
    yield {"type": "categorical", "mechanism": "oue", "epsilon": 1.0,
           "options": [f"o{i}" for i in range(16)]}
    yield {"type": "integer", "mechanism": "geometric", "epsilon": 0.5, "min": -3, "max": 40}
    yield {"type": "ordinal", "mechanism": "ordinal_exp", "epsilon": 2.0,
           "options": ["low", "mid", "high"]}
    # A set enters the HMAC message as its labels in the options' order.
    yield {"type": "multiselect", "mechanism": "psfo_grr", "epsilon": 2.0,
           "options": ["ü", "b", "日本語", "d"], "max_selected": 3}
    # Labels enter the HMAC message as JSON: escapes and non-ASCII must match Python's.
    yield {"type": "categorical", "mechanism": "grr", "epsilon": 1.0, "instantaneous_epsilon": 1.0,
           "options": ["ü", "日本語", "a\"b\\c", "tab\there", "emoji 😀", "line\u2028sep",
                       "del\x7f", "nul-ish\x01"]}


def _answers(question: dict[str, Any], every: bool = False) -> list[Any]:
    """Two answers per question (first and middle, or both ends); `every` option of short
    lists (memoized cases: each answer is its own HMAC message)."""
    if question["type"] == "binary":
        return [True, False]
    if question["type"] == "integer":
        return [question["min"], question["max"]]
    if question["type"] == "location":
        grid = question["grid"]
        return ["1,1", f"{(grid['rows'] + 1) // 2},{(grid['cols'] + 1) // 2}"]
    if question["type"] == "multiselect" and question.get("exclusive"):
        alone = question["exclusive"]  # each exclusive option alone, the largest other set
        free = [o for o in question["options"] if o not in alone]
        largest = list(reversed(free[:question["max_selected"]]))
        return [[alone[-1]], largest] if not every else [*([o] for o in alone), largest]
    if question["type"] == "multiselect":  # the smallest and largest sets, listed out of order
        options, m = question["options"], question["max_selected"]
        largest = [options[(3 * j) % len(options)] for j in range(m)]
        if len(set(largest)) < m:
            largest = list(reversed(options[:m]))
        smallest = [] if not question["required_min"] else [options[-1]]
        return [smallest, largest] if not every else [smallest, largest, largest[::-1]]
    options = question["options"]
    if every and len(options) <= 8:
        return list(options)
    return [options[0], options[-1] if len(options) == 2 else options[len(options) // 2]]


def _plain(report: Any) -> Any:
    if hasattr(report, "tolist"):
        return report.tolist()
    return list(report) if isinstance(report, tuple) else report


def _perturb(mech: Any, answer: Any, seed: int) -> dict[str, Any]:
    source = RecordingSource(seed)
    out: dict[str, Any] = {}
    try:
        out["report"] = _plain(mech.validate_report(mech.perturb(answer, source)))
    except ReportError:
        out["error"] = "ReportError"
    out["tape"] = source.tape
    return out


def _memoized(mech: Any, question: dict[str, Any], answer: Any, seed: int,
              memo: Memoizer) -> dict[str, Any]:
    """What the Python client does for a series question (Memoizer.report), with the fresh
    instantaneous draws from a recording source instead of the OS CSPRNG."""
    source = RecordingSource(seed)
    value = memo.permanent_value(mech, SERIES, question["id"], answer)
    layered = getattr(mech, "instantaneous", None) is not None
    report = _rerandomize(mech, value, source) if layered else value
    return {"report": _plain(mech.validate_report(report)), "tape": source.tape,
            "memo": {"secret": MEMO_SECRET.hex(), "series": SERIES,
                     "permanent": _plain(getattr(mech, "permanent", mech).validate_report(value)),
                     "tag": memo.answer_tag(mech, SERIES, question["id"], answer)}}


def _rerandomize(mech: Any, value: Any, source: RecordingSource) -> Any:
    """The instantaneous layer on a permanent value, with `source` (the method is
    `rerandomize` once the mechanism contract of issue 11 lands, `instantaneous_report`
    before)."""
    method = getattr(mech, "rerandomize", None) or mech.instantaneous_report
    return method(value, source)


def _refused() -> Iterator[tuple[str, dict[str, Any]]]:
    """(why, question) the Python side refuses; each checked to be refused by Survey parsing."""
    base = _question({"id": "q", "text": "q", "type": "categorical", "mechanism": "grr",
                      "epsilon": 1.0, "options": ["a", "b", "c"]})
    tampered = copy.deepcopy(base)
    tampered["params"]["p"] = "9/10"
    yield "a parameter changed", tampered
    fractional = copy.deepcopy(base)
    fractional["params"]["p"] = 0.5
    yield "a parameter as a float", fractional
    missing = copy.deepcopy(base)
    missing["params"] = {"p": base["params"]["p"]}
    yield "a parameter missing", missing
    wrong = copy.deepcopy(base)
    wrong["epsilon"] = 2.0
    yield "ε raised without new parameters", wrong
    unfit = copy.deepcopy(base)
    unfit["mechanism"] = "geometric"
    yield "a mechanism that does not fit the type", unfit
    layered = _question({"id": "q", "text": "q", "type": "categorical", "mechanism": "oue",
                         "epsilon": 1.0, "options": ["a", "b", "c"]})
    layered["instantaneous_epsilon"] = 0.5
    yield "an instantaneous layer on oue", layered
    big = _question({"id": "q", "text": "q", "type": "ordinal", "mechanism": "ordinal_exp",
                     "epsilon": 1.0, "options": [f"o{i}" for i in range(1024)]})
    big["options"].append("o1024")
    yield "ordinal_exp beyond 1024 options", big
    forced = _question({"id": "q", "text": "q", "type": "binary",
                        "mechanism": "forced_response",
                        "params": {"p_truth": "1/2", "forced": {"yes": "1/4", "no": "1/4"}}})
    never = copy.deepcopy(forced)
    never["params"]["forced"] = {"yes": "1/2", "no": "0"}
    yield "a forced response that never forces 'no' (a 'no' proves the answer)", never
    low = copy.deepcopy(forced)
    low["epsilon"] = 1.0  # its exact ε is ln 3
    yield "a design's ε stated below its exact one", low
    zero = _question({"id": "q", "text": "q", "type": "binary", "mechanism": "matrix",
                      "params": {"matrix": [["1/2", "1/2"], ["1/4", "3/4"]]}})
    zero["params"]["matrix"] = [["1", "0"], ["1/4", "3/4"]]
    yield "a matrix with a report impossible under one answer", zero
    too_much = copy.deepcopy(base)
    too_much["epsilon"] = 51.0
    yield "ε above the schema's maximum", too_much
    where = _question({"id": "q", "text": "q", "type": "location", "epsilon_geo": 1.0,
                       "grid": {"rows": 4, "cols": 4, "cell_km": 1.0}})
    moved = copy.deepcopy(where)
    moved["params"]["base"] = "3/2"
    yield "a location base changed", moved
    cheap = copy.deepcopy(where)
    cheap["epsilon"] = round(cheap["epsilon"] / 2, 6)
    yield "a location ε below its grid's exact plain ε", cheap
    bigger = copy.deepcopy(where)
    bigger["grid"]["rows"] = 5
    yield "a larger grid under the old parameters and ε", bigger
    chosen = _question({"id": "q", "text": "q", "type": "multiselect", "mechanism": "psfo_grr",
                        "epsilon": 1.0, "options": ["a", "b", "c", "d"], "max_selected": 2})
    more = copy.deepcopy(chosen)
    more["max_selected"] = 3
    yield "larger sets under the old parameters", more
    blank = copy.deepcopy(chosen)
    blank["params"]["pad"] = 1
    yield "padding shorter than the largest set", blank
    bits = _question({"id": "q", "text": "q", "type": "multiselect", "mechanism": "option_rr",
                      "epsilon": 1.0, "options": ["a", "b", "c", "d"], "max_selected": 2})
    keen = copy.deepcopy(bits)
    keen["params"]["p"], keen["params"]["q"] = "3/4", "1/4"
    yield "per-option bits kept more often than ε/Δ allows", keen
    half = copy.deepcopy(bits)
    half["mechanism"] = "set_ue"
    half["max_selected"] = 3
    yield "set_ue for more than half the options", half
    none = ["a", "b", "c", "none"]
    alone = _question({"id": "q", "text": "q", "type": "multiselect", "mechanism": "psfo_grr",
                       "epsilon": 1.0, "options": none, "exclusive": ["none"]})
    dropped = copy.deepcopy(alone)
    del dropped["exclusive"]
    yield "exclusive options dropped under their shorter padding", dropped
    wide = copy.deepcopy(alone)
    wide["params"] = _question({**{k: v for k, v in alone.items() if k != "params"},
                                "exclusive": None})["params"]
    yield "exclusive options with the padding of every set", wide
    everything = copy.deepcopy(alone)
    everything["exclusive"] = ["a", "b", "c", "none"]
    yield "every option exclusive", everything
    tuned = _question({"id": "q", "text": "q", "type": "multiselect", "mechanism": "set_ue",
                       "epsilon": 1.0, "options": none, "max_selected": 2})
    tuned["exclusive"] = ["none"]
    yield "set_ue for more than half the options that can be selected together", tuned
    rr = _question({"id": "q", "text": "q", "type": "multiselect", "mechanism": "option_rr",
                    "epsilon": 1.0, "options": [*none, "dk"], "exclusive": ["none", "dk"]})
    rr_wide = copy.deepcopy(rr)
    del rr_wide["exclusive"]
    yield "per-option bits sized for Δ with exclusive options, without them", rr_wide
    geometric = _question({"id": "q", "text": "q", "type": "integer", "mechanism": "geometric",
                           "epsilon": 1.0, "min": 0, "max": 30})
    geometric["max"] = 31
    yield "a wider range under the old parameters", geometric


def _refused_by_limits() -> Iterator[tuple[str, dict[str, Any]]]:
    """Questions beyond a mechanism's declared limits: refusal vectors where the Python side
    refuses them (the page mirrors Mechanism.misfit's limits)."""
    e = rational_exp_floor(1e-7)  # GRR's parameters at that ε, as a signer would write them
    yield "ε below the smallest a mechanism is built for", {
        "id": "q", "text": "q", "type": "categorical", "mechanism": "grr", "epsilon": 1e-7,
        "optional": False, "options": ["a", "b"], "groups": {},
        "params": {"p": str(e / (e + 1)), "q": str(1 / (e + 1))}}
    wide = _question({"id": "q", "text": "q", "type": "integer", "mechanism": "geometric",
                      "epsilon": 50.0, "min": -2**50, "max": 2**50})
    wide["epsilon"] = 1.0
    wide["params"]["epsilon_rational"] = "1"
    yield "noise reaching past the integers JSON carries", wide


def build_vectors() -> dict[str, Any]:
    """Every vector, as a JSON-ready dict (big integers as strings)."""
    cases: list[dict[str, Any]] = []

    def add(spec: dict[str, Any], series: str | None, memo: Memoizer | None) -> None:
        question = _question({"id": f"q{len(cases)}", "text": "A question?", **spec}, series)
        mech = mechanism_for(Survey.from_dict({
            "id": "vectors", "title": "Vectors", "version": 1, "questions": [question],
            **({"series": series} if series else {})}).questions[0])
        for answer in _answers(question, every=memo is not None):
            for seed in SEEDS if memo is None else SEEDS[:1]:
                result = (_perturb(mech, answer, seed) if memo is None
                          else _memoized(mech, question, answer, seed, memo))
                cases.append({"question": question, "answer": answer, **result})

    with tempfile.TemporaryDirectory() as tmp:
        state = StateDir(tmp)
        (Path(tmp) / SECRET_FILE).write_bytes(MEMO_SECRET)
        memo = Memoizer(state)
        for spec in [*_specs(), *_design_specs()]:
            add(spec, None, None)
        for spec in _layered_specs():
            add(spec, SERIES, None)  # no memo: both layers fresh (perturb_index)
            add(spec, SERIES, memo)
        for spec in _memo_only_specs():
            add(spec, SERIES, memo)
    refused = []
    for why, question in _refused_by_limits():
        try:
            Survey.from_dict({"id": "vectors", "title": "Vectors", "version": 1,
                              "questions": [question]})
        except (LdpSurveyError, ValueError):
            refused.append({"why": why, "question": question})
    for why, question in _refused():
        try:
            Survey.from_dict({"id": "vectors", "title": "Vectors", "version": 1,
                              "questions": [question]})
        except (LdpSurveyError, ValueError):
            refused.append({"why": why, "question": question})
        else:
            raise AssertionError(f"the Python side accepts {why!r}: not a refusal vector")
    for case in cases:
        case["tape"] = [[hex(n), hex(v)] for n, v in case["tape"]]
        if case["question"]["type"] == "integer":
            case["answer"] = str(case["answer"])
    return {"cases": cases, "refused": refused}


def write_vectors(path: Path) -> dict[str, Any]:
    """Build the vectors and write them to `path`, one case per line."""
    vectors = build_vectors()
    lines = []
    for key in ("cases", "refused"):
        items = ",\n".join(json.dumps(item, ensure_ascii=False) for item in vectors[key])
        lines.append(f'"{key}": [\n{items}\n]')
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return vectors
