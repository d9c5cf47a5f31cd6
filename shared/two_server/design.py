"""Design-based estimates of a two-server survey: post-stratification on the invitation codes'
cells and variance by random groups, from one noisy aggregate per batch.

In a two-server survey no server holds a report per respondent, so nothing is weighted one
respondent at a time. What the design can still do is choose **which respondents share a
batch**: when the invitation codes carry a design (`invites create --design FRAME.csv
[--groups G]`), the leader batches every cell (the code's stratum) and every random group
apart (server/two_server/leader.py), each server adds its own noise to each batch, and each
collected batch says which cell and group it holds. Every respondent is in exactly one batch.

Estimators (docs/weights.md, "Two-server surveys"; Wolter 2007, ch. 2 and 4; Kott 2001):

- within a cell c, a share (a group, a mean score, an integer mean, a joint share) is the
  ratio θ_c = T̃_c/n_c of the cell's noisy total over its respondents, T̃_c the sum of the
  cell's batches (`estimates.estimate_two_server` on the summed entry: its noise variance is
  the number of batches times one batch's);
- across cells, θ = Σ_c W_c θ_c: **post-stratified** with W_c = N_c/N from population counts
  per cell, **weighted** with W_c ∝ w_c n_c when the codes' weights are constant within each
  cell (a stratified sample's estimate), or **pooled** (θ = ΣT̃/Σn, every batch added up);
  among those asked (skip logic) the ratio of the combined shares;
- the **formula** variance Σ_c W_c² Var(θ_c) (respondents independent within a cell, with
  replacement; the per-batch variance of shared/two_server/estimates.py: sampling, local
  randomization and both servers' noise of every batch added up), or
- the **delete-a-group jackknife** over the G random groups: θ_(g) recomputed without group g
  (the cells' estimates and, when weighted, their weights), v = (G − 1)/G Σ_g (θ_(g) − θ̄)²
  with θ̄ the replicates' mean, and a Student t interval with G − 1 degrees of freedom. The
  groups are random sets of whole PSUs, each with its own noise, so the spread between them
  carries the clustering, the sampling, the local randomization and the servers' noise alike.

The price of batching by group is noise: B batches add B independent draws of each server's
noise, so the noise's variance in a total is B times one batch's (`noise_cost`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..distributions import t_value
from ..errors import EstimateError
from ..estimand import CLIP
from ..estimates import norm_sub, z_value
from .estimates import COLLECTION, estimate_crosstab, estimate_two_server
from .results import BatchEntry, CollectedBatch

FORMULA = "formula"
GROUPS = "groups"
VARIANCES = (FORMULA, GROUPS)

ACCOUNTING = (
    "Each respondent is in exactly one batch (their cell's and random group's, from the "
    "operator's invitation code): the batches are disjoint, so they compose in parallel and "
    "each respondent's answers are released once, at the central ε above.",
    "Each cell's release (the noisy totals of its batches, and how many of its respondents "
    "answered, which is released exactly as every batch's count is) is central-ε private for "
    "each of the cell's respondents, with both servers' noise in every batch. A respondent's "
    "cell and group are the operator's labels on their invitation code, not an answer: they "
    "are known to the leader and shown in the report, not protected.",
)


@dataclass(frozen=True)
class BatchDesign:
    """How to combine a survey version's collected batches.

    `totals`: population count per cell (post-stratification); `weights`: the design weight
    of every respondent of a cell (the codes' weights, constant within the cell); neither:
    the batches are pooled. `variance`: "formula" or "groups" (delete-a-group jackknife).
    `clustered`: the codes put respondents in PSUs, which the formula would treat as
    independent (refused: use the random groups)."""

    totals: Mapping[str, float] | None = None
    weights: Mapping[str, float] | None = None
    variance: str = FORMULA
    clustered: bool = False

    def __post_init__(self) -> None:
        if self.variance not in VARIANCES:
            raise EstimateError(f"variance must be one of {', '.join(VARIANCES)}")
        if self.totals is not None and self.weights is not None:
            raise EstimateError("post-stratify to population totals or weight by the codes' "
                                "weights, not both")
        for name, values in (("population total", self.totals), ("weight", self.weights)):
            for cell, value in (values or {}).items():
                if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                    raise EstimateError(f"cell {cell!r}: the {name} must be a finite number "
                                        f"> 0, got {value!r}")

    @property
    def by_cell(self) -> bool:
        return self.totals is not None or self.weights is not None

    def method(self) -> str:
        if self.totals is not None:
            return f"post-stratified to the population counts of {len(self.totals)} cells"
        if self.weights is not None:
            return "weighted by the invitation codes' design weights (one weight per cell)"
        return "every batch added up (no cells)"


# --- the batches, by cell and group ----------------------------------------------------------


def _check_batches(survey: Any, batches: Sequence[CollectedBatch], design: BatchDesign) -> None:
    if not batches:
        raise EstimateError(f"survey {survey.id!r} v{survey.version} has no collected batch "
                            "yet: aggregate the uploads first (ldpsurvey batches --aggregate)")
    for b in batches:
        if b.survey_id != survey.id or int(b.version) != int(survey.version):
            raise EstimateError(f"batch {b.batch_id} is of survey {b.survey_id!r} "
                                f"v{b.version}, not {survey.id!r} v{survey.version}")
    if len({b.batch_id for b in batches}) != len(batches):
        raise EstimateError("a batch is listed twice")
    if design.by_cell:
        cells = {b.cell for b in batches}
        if None in cells:
            raise EstimateError("the batches are not per cell: the survey's invitation codes "
                                "carry no stratum, so the leader batched all of them together")
        known = design.totals if design.totals is not None else design.weights
        assert known is not None
        missing = sorted(c for c in cells if c not in known)
        if missing:
            raise EstimateError(f"cell {missing[0]!r} has respondents but no "
                                f"{'population total' if design.totals else 'weight'}")
        if design.totals is not None:
            empty = sorted(set(design.totals) - cells)
            if empty:
                raise EstimateError(f"cell {empty[0]!r} has a population total but no batch "
                                    "(no respondent, or its uploads still wait for a batch): "
                                    "an empty cell; merge it with a neighbour in the frame")
    if design.variance == GROUPS:
        if any(b.group is None for b in batches):
            raise EstimateError("the batches carry no random group: the delete-a-group "
                                "jackknife needs invitation codes made with --groups G "
                                "(ldpsurvey invites create --design FRAME.csv --groups G)")
        if len({b.group for b in batches}) < 2:
            raise EstimateError("the delete-a-group jackknife needs batches of at least 2 "
                                "random groups")
    elif design.clustered:
        raise EstimateError("the invitation codes put respondents in clusters (PSUs), which "
                            "the formula variance would treat as independent respondents: "
                            "use --variance groups (codes made with --groups G deal whole "
                            "PSUs into random groups)")


def _sum_entries(entries: Sequence[BatchEntry]) -> BatchEntry:
    """One entry adding up several batches' totals of the same key (the noise of each)."""
    first = entries[0]
    sums = np.sum([list(e.noisy_sums) for e in entries], axis=0)
    return replace(first, noisy_sums=tuple(int(v) for v in sums),
                   n=sum(int(e.n) for e in entries),
                   rejected=sum(int(e.rejected) for e in entries),
                   batches=sum(int(e.batches) for e in entries))


def _keys(survey: Any) -> list[tuple[str, Callable[[BatchEntry, float], dict[str, Any]]]]:
    """Every released key of the survey and how one entry of it is estimated."""
    keys: list[tuple[str, Callable[[BatchEntry, float], dict[str, Any]]]] = []
    for q in survey.questions:
        keys.append((q.id, lambda e, c, q=q: estimate_two_server(q, e, c).to_dict()))
    for spec in getattr(survey, "crosstabs", ()):
        rows, cols = survey.question(spec.rows), survey.question(spec.cols)
        keys.append((spec.key, lambda e, c, r=rows, k=cols: estimate_crosstab(r, k, e,
                                                                              c).to_dict()))
    return keys


# --- rows of an estimate document ------------------------------------------------------------


def _rows(doc: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every row of one question's (crosstab's) document that holds an estimate, with its
    kind: "linear" (a share of everyone, a mean, a joint share) or "asked" (among those
    asked, a ratio)."""
    for name in ("categories", "groups", "distribution", "cells", "special"):
        for row in doc.get(name) or []:
            yield "linear", row
    for name in ("mean", "not_asked"):
        if isinstance(doc.get(name), dict):
            yield "linear", doc[name]
    asked = doc.get("among_asked") or {}
    for name in ("categories", "groups"):
        for row in asked.get(name) or []:
            yield "asked", row
    if isinstance(asked.get("mean"), dict):
        yield "asked", asked["mean"]


def _estimates(doc: Mapping[str, Any]) -> list[float | None]:
    return [row.get("estimate") for _, row in _rows(doc)]


QUANTILES_NOTE = ("quantiles: not combined across the design's cells (a quantile is not a "
                  "weighted sum of the cells' quantiles); the weighted distribution's bins are")


def _combine(pooled: dict[str, Any], cells: Sequence[dict[str, Any]], shares: np.ndarray,
             z: float, variance: bool) -> dict[str, Any]:
    """The document θ = Σ_c W_c θ_c on the pooled document's shape (its n, notes, labels);
    with `variance`, the formula Σ_c W_c² Var(θ_c). Among those asked: the combined shares'
    ratios (their formula standard error is not given across cells: the jackknife gives it)."""
    import copy

    out = copy.deepcopy(pooled)
    cell_rows = [list(_rows(doc)) for doc in cells]
    for i, (kind, row) in enumerate(_rows(out)):
        if kind != "linear":
            continue
        parts = [rows[i][1] for rows in cell_rows]
        values = [p.get("estimate") for p in parts]
        if any(v is None for v, w in zip(values, shares, strict=True) if w > 0):
            for field in ("estimate", "std_error", "variance_bound", "ci_low", "ci_high",
                          "consistent"):
                if field in row:
                    row[field] = None
            continue
        row["estimate"] = float(sum(w * v for v, w in zip(values, shares, strict=True) if w))
        if "consistent" in row:
            row["consistent"] = float(sum(w * (p.get("consistent") or 0.0)
                                          for p, w in zip(parts, shares, strict=True) if w))
        if variance:
            var = sum(w * w * float(p["std_error"]) ** 2
                      for p, w in zip(parts, shares, strict=True) if w)
            bound = [p.get("variance_bound") for p, w in zip(parts, shares, strict=True) if w]
            row["variance_bound"] = (None if any(b is None for b in bound) else
                                     float(sum(w * w * float(p["variance_bound"])
                                               for p, w in zip(parts, shares, strict=True)
                                               if w)))
            _interval(row, math.sqrt(var), z)
    if out.get("among_asked"):
        _among_asked(out, z, single=len(cells) == 1, cells=cells, shares=shares)
    if out.get("quantiles") and len(cells) > 1:  # the pooled ones would ignore the weights
        for row in out["quantiles"]:
            row.update({f: None for f in ("estimate", "std_error", "variance_bound", "ci_low",
                                          "ci_high", "consistent") if f in row})
        out.setdefault("notes", []).append(QUANTILES_NOTE)
    return out


def _interval(row: dict[str, Any], se: float | None, q: float) -> None:
    row["std_error"] = se
    value = row.get("estimate")
    if se is None or value is None:
        row["ci_low"] = row["ci_high"] = None
    else:
        row["ci_low"], row["ci_high"] = value - q * se, value + q * se


def _among_asked(doc: dict[str, Any], z: float, single: bool,
                 cells: Sequence[dict[str, Any]] = (), shares: Any = None) -> None:
    """Among those asked (who answered), from the combined shares of everyone: a share is the
    option's share over the share who answered (1 − not asked − the special shares), a mean
    its values' weighted sum over it. An integer follow-up's local pair releases no values'
    shares: its mean among those asked is the cells' means weighted by their shares asked,
    Σ W_c π_c μ_c / Σ W_c π_c (the same ratio)."""
    if single:
        return  # one cell: the per-entry estimator's rows (with their delta-method s.e.)
    # the extra values (special values, then "not asked") are the last category rows
    special = doc.get("special") or []
    hidden = isinstance(doc.get("not_asked"), dict)
    extras = len(special) + int(hidden)
    asked_share = 1.0 - sum(float(r["estimate"]) for r in special) - (
        float(doc["not_asked"]["estimate"]) if hidden else 0.0)
    asked = doc["among_asked"]
    if doc.get("distribution") is None and doc.get("categories") is None:
        parts = [((1.0 - c["not_asked"]["estimate"]) * c["among_asked"]["mean"]["estimate"]
                  if c["not_asked"]["estimate"] is not None
                  and c["among_asked"]["mean"]["estimate"] is not None else None)
                 for c in cells]
        numerator = (None if any(p is None for p, w in zip(parts, shares, strict=True) if w)
                     else sum(w * p for p, w in zip(parts, shares, strict=True) if w))
        asked["mean"]["estimate"] = (None if numerator is None or asked_share <= 0
                                     else float(numerator) / asked_share)
        _interval(asked["mean"], None, z)
        return
    if doc.get("distribution") is not None:  # an integer question: its values' shares
        shares = np.array([float(r["estimate"]) for r in doc["distribution"]])
        values = np.array([float(r["value"]) for r in doc["distribution"]])
        asked["mean"]["estimate"] = float(values @ shares) / asked_share
        _interval(asked["mean"], None, z)
        return
    cats = doc["categories"][:len(doc["categories"]) - extras]
    shares = np.array([float(r["estimate"]) for r in cats])
    ratio = shares / asked_share
    # a multiselect question's shares overlap (clipped each, and their sum is the mean number
    # selected); other questions' are a distribution (Norm-Sub, and the mean is a score's)
    overlapping = doc.get("consistent_method") == CLIP
    clipped = np.clip(ratio, 0.0, 1.0) if overlapping else norm_sub(ratio)
    index = {r["value"]: i for i, r in enumerate(cats)}
    for i, row in enumerate(asked.get("categories") or []):
        row["estimate"], row["consistent"] = float(ratio[i]), float(clipped[i])
        _interval(row, None, z)
    for row in asked.get("groups") or []:
        members = [index[v] for v in row["options"]]
        row["estimate"] = float(ratio[members].sum())
        row["consistent"] = float(clipped[members].sum())
        _interval(row, None, z)
    if isinstance(asked.get("mean"), dict):
        scores = np.ones(len(cats)) if overlapping else np.arange(1, len(cats) + 1)
        asked["mean"]["estimate"] = float(scores @ ratio)
        _interval(asked["mean"], None, z)


# --- the estimate ----------------------------------------------------------------------------


def _cell_shares(design: BatchDesign, cells: Sequence[str | None],
                 ns: Sequence[int], key: str) -> np.ndarray:
    """W_c of one key: population shares, or weighted (w_c n_c) / pooled (n_c) shares."""
    if design.totals is not None:
        for cell, n in zip(cells, ns, strict=True):
            if n == 0:
                raise EstimateError(f"cell {cell!r} has no respondent for {key!r}: an empty "
                                    "cell cannot be post-stratified (merge it with a "
                                    "neighbour)")
        raw = np.array([float(design.totals[c]) for c in cells])  # type: ignore[index]
    elif design.weights is not None:
        raw = np.array([float(design.weights[c]) * n  # type: ignore[index]
                        for c, n in zip(cells, ns, strict=True)])
    else:
        raw = np.array([float(n) for n in ns])
    total = raw.sum()
    return raw / total if total > 0 else raw


def _document(survey: Any, batches: Sequence[CollectedBatch], design: BatchDesign,
              confidence: float, variance: bool) -> dict[str, Any]:
    """The combined estimate document of these batches: per key θ = Σ W_c θ_c."""
    z = z_value(confidence)
    cells = sorted({b.cell for b in batches}, key=lambda c: (c is None, c or "")) \
        if design.by_cell else [None]
    docs: dict[str, dict[str, Any]] = {}
    for key, estimate in _keys(survey):
        entries = []
        for b in batches:
            if key not in b.entries:
                raise EstimateError(f"batch {b.batch_id} has no totals for {key!r}")
            entries.append(b.entries[key])
        pooled = estimate(_sum_entries(entries), confidence)
        if not design.by_cell:
            docs[key] = pooled
            continue
        per_cell = [_sum_entries([b.entries[key] for b in batches if b.cell == c])
                    for c in cells]
        shares = _cell_shares(design, cells, [int(e.n) for e in per_cell], key)
        docs[key] = _combine(pooled, [estimate(e, confidence) for e in per_cell], shares, z,
                             variance)
    return docs


def estimate_batches(survey: Any, batches: Sequence[CollectedBatch], design: BatchDesign,
                     confidence: float = 0.95) -> dict[str, Any]:
    """The design-based estimate document of a survey version's collected batches: the shape
    of `estimate_batch`'s (so every report format renders it), plus `design`: the method, the
    cells and groups, the degrees of freedom, the noise's cost and the privacy accounting."""
    from .guarantees import survey_guarantees

    _check_batches(survey, batches, design)
    docs = _document(survey, batches, design, confidence, variance=design.variance == FORMULA)
    groups = sorted({b.group for b in batches if b.group is not None})
    df = None
    if design.variance == GROUPS:
        df = len(groups) - 1
        _jackknife(survey, batches, design, confidence, docs, groups)
    questions = [docs[q.id] for q in survey.questions]
    crosstabs = [docs[spec.key] for spec in getattr(survey, "crosstabs", ())]
    for doc in (*questions, *crosstabs):
        doc.setdefault("notes", []).append(_variance_note(design, len(groups)))
    entries = [_sum_entries([b.entries[q.id] for b in batches]) for q in survey.questions]
    return {"survey": survey.id, "version": survey.version, "collection": COLLECTION,
            "batch": f"{len(batches)} batches", "confidence": confidence,
            "n_submissions": max((int(e.n) for e in entries), default=0),
            "rejected": sum(int(e.rejected) for e in entries),
            "questions": questions, "crosstabs": crosstabs,
            "guarantees": survey_guarantees(survey).to_dict(),
            "design": _summary(survey, batches, design, confidence, groups, df)}


def _jackknife(survey: Any, batches: Sequence[CollectedBatch], design: BatchDesign,
               confidence: float, docs: dict[str, dict[str, Any]], groups: list[int]) -> None:
    """Delete-a-group jackknife standard errors and t intervals, in place."""
    for g in groups:
        kept = [b for b in batches if b.group != g]
        if design.by_cell:
            lost = sorted({b.cell for b in batches} - {b.cell for b in kept})  # type: ignore[type-var]
            if lost:
                raise EstimateError(f"every respondent of cell {lost[0]!r} is in random group "
                                    f"{g}: without it the cell has no estimate, so the "
                                    "delete-a-group jackknife needs each cell in at least two "
                                    "groups (more respondents per cell, or fewer groups)")
    replicates = [_document(survey, [b for b in batches if b.group != g], design, confidence,
                            variance=False) for g in groups]
    big_g = len(groups)
    q = t_value(confidence, big_g - 1)
    for key, doc in docs.items():
        reps = [_estimates(r[key]) for r in replicates]
        for i, (_, row) in enumerate(_rows(doc)):
            values = [rep[i] for rep in reps]
            if row.get("estimate") is None or any(v is None for v in values):
                _interval(row, None, q)
                row["variance_bound"] = None
                continue
            theta = np.array(values, dtype=float)
            v = (big_g - 1) / big_g * float(np.sum((theta - theta.mean()) ** 2))
            _interval(row, math.sqrt(v), q)
            row["variance_bound"] = None  # no worst case for a replicate variance


def _variance_note(design: BatchDesign, groups: int) -> str:
    if design.variance == GROUPS:
        return (f"standard errors: delete-a-group jackknife over {groups} random groups "
                f"({groups - 1} degrees of freedom, Student t intervals); they count the "
                "clustering, the sampling, the local randomization and both servers' noise "
                "of every batch")
    return ("standard errors: formula per cell (respondents independent within a cell, with "
            "replacement), both servers' noise of every batch added up")


def noise_cost(survey: Any, batches: Sequence[CollectedBatch],
               confidence: float = 0.95) -> list[dict[str, Any]]:
    """Per question, what adding up B batches costs against one batch of the same
    respondents: the noise's share of the formula variance of its first estimate with B
    batches' noise, and how much larger that variance is than with one batch's."""
    out = []
    b_count = len(batches)
    for q in survey.questions:
        entry = _sum_entries([b.entries[q.id] for b in batches])
        if int(entry.n) == 0:
            continue
        ses = [_first_se(estimate_two_server(q, replace(entry, batches=k), confidence)
                         .to_dict()) for k in (b_count, 1, 2)]
        if any(s is None for s in ses):
            continue
        v_b, v_1, v_2 = (float(s) ** 2 for s in ses)  # type: ignore[arg-type]
        one = v_2 - v_1  # one batch's noise
        out.append({"question": q.id, "batches": b_count,
                    "noise_share": (b_count * one / v_b) if v_b > 0 else None,
                    "variance_vs_one_batch": (v_b / v_1) if v_1 > 0 else None})
    return out


def _first_se(doc: Mapping[str, Any]) -> float | None:
    for kind, row in _rows(doc):
        if kind == "linear" and row.get("std_error") is not None:
            return float(row["std_error"])
    return None


def _summary(survey: Any, batches: Sequence[CollectedBatch], design: BatchDesign,
             confidence: float, groups: list[int], df: int | None) -> dict[str, Any]:
    first = survey.questions[0].id
    cells: dict[str | None, dict[str, Any]] = {}
    for b in batches:
        row = cells.setdefault(b.cell, {"cell": b.cell, "batches": 0, "n": 0, "groups": set()})
        row["batches"] += 1
        row["n"] += int(b.entries[first].n)
        if b.group is not None:
            row["groups"].add(b.group)
    listed = []
    for cell in sorted(cells, key=lambda c: (c is None, c or "")):
        row = cells[cell]
        item = {"cell": cell, "batches": row["batches"], "respondents": row["n"],
                "groups": sorted(row["groups"])}
        if design.totals is not None and cell is not None:
            item["population"] = float(design.totals[cell])
        if design.weights is not None and cell is not None:
            item["weight"] = float(design.weights[cell])
        listed.append(item)
    variance = (f"delete-a-group jackknife over {len(groups)} random groups ({df} degrees of "
                f"freedom, t = {t_value(confidence, df):.4g})" if df is not None
                else "formula per cell (with replacement)")
    return {"method": design.method(), "variance": design.variance,
            "variance_words": variance, "degrees_of_freedom": df,
            "batches": len(batches), "cells": listed, "groups": groups,
            "noise": noise_cost(survey, batches, confidence),
            "accounting": list(ACCOUNTING)}


__all__ = ["ACCOUNTING", "FORMULA", "GROUPS", "BatchDesign", "estimate_batches", "noise_cost"]
