"""The sample design of a survey: per respondent a weight, a stratum, a PSU (cluster) and an
optional finite-population correction, checked once when built (docs/design-based.md).

`Design.build` takes the operator's frame columns as they come (numbers or text, e.g. read from
a CSV) and refuses, naming the row, a weight that is missing, not a number, negative, zero,
not finite or above MAX_WEIGHT, an fpc that is not a population size (at most MAX_POPULATION)
or sampling fraction, and a stratum with a single PSU unless `lonely_psu` says what to do
with it. The options are R's `survey.lonely.psu`, with the same effect on a one-stage
(ultimate cluster) variance:

- "fail" (R's default): refuse the design, naming the stratum.
- "remove": the stratum adds nothing to the variance (an underestimate; nothing else changes).
- "certainty": the PSU was taken with certainty, so it has no sampling variance; unlike
  "remove", its respondents' randomization variance is still counted (docs/design-based.md).
- "adjust": the PSU's total is compared with 0, the mean of the influence values (R centres
  it at the "grand mean" rather than the stratum mean), instead of with its own stratum's mean.
- "average": the stratum gets the average variance of the other strata (the sum over the
  strata that have two PSUs or more is multiplied by H / H_ok).

PSU labels are nested in strata (R's `nest = TRUE`): PSU "1" of stratum "a" and PSU "1" of
stratum "b" are different clusters. Without strata the sample is one stratum; without PSUs
each respondent is their own PSU (an element sample). The fpc is, per row, the number of PSUs
in the stratum's population (>= the sampled PSUs) or, when every value is at most 1, the
sampling fraction of the stratum (R's two conventions); it must be the same within a stratum.
Weights are final survey weights (1/π, or weights already adjusted): they enter every
estimator as given, and calibration (calibration.py) replaces them by calibrated ones while
keeping the base weights it started from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..design_frame import MAX_POPULATION, MAX_WEIGHT
from ..errors import CalibrationError, DesignError
from .keys import unique_keys

LONELY_PSU = ("fail", "remove", "certainty", "adjust", "average")


@dataclass(frozen=True, eq=False)
class NumberedLabels:
    """A stratum or PSU column as integer codes (one per respondent) into its labels: how a
    server database stores a survey's labels (numbered once per survey, server/store/
    packed_designs.py), so `Design.build` maps the distinct labels once instead of reading a
    text per respondent. Code -1 (or a label of blanks) is a missing label. The design built
    is the same as from the labels themselves (`texts`)."""

    codes: np.ndarray  # int64, -1: missing
    labels: Sequence[str]

    def __len__(self) -> int:
        return int(self.codes.size)

    def texts(self) -> np.ndarray:
        """The labels themselves, an object array of text ('' where missing)."""
        table = np.array([*self.labels, ""], dtype=object)
        return table[self.codes]  # -1 is the '' appended


@dataclass(frozen=True, eq=False)
class Design:
    """A validated sample design over n respondents (rows in the order of the data).

    `weights` are the weights estimators use (calibrated ones once calibrated); `base_weights`
    the design weights before any calibration. `strata` and `psus` are integer codes
    (0..H-1, 0..P-1, PSU codes unique across strata) with their labels; `population_psus`
    is N_h per stratum (inf: no fpc). `calibration` lists the calibration steps applied, in
    order (their residuals linearize the variance, calibration.py).
    """

    weights: np.ndarray
    strata: np.ndarray
    psus: np.ndarray
    stratum_labels: tuple[str, ...]
    psu_labels: tuple[tuple[str, str], ...]
    population_psus: np.ndarray
    lonely_psu: str = "fail"
    base_weights: np.ndarray | None = None
    calibration: tuple[Any, ...] = ()
    # derived (filled by __post_init__)
    psu_stratum: np.ndarray = field(init=False, repr=False)
    sampled_psus: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        psu_stratum = np.zeros(len(self.psu_labels), dtype=np.int64)
        psu_stratum[self.psus] = self.strata
        object.__setattr__(self, "psu_stratum", psu_stratum)
        object.__setattr__(self, "sampled_psus",
                           np.bincount(psu_stratum, minlength=len(self.stratum_labels)))
        if self.base_weights is None:
            object.__setattr__(self, "base_weights", self.weights)

    # --- building --------------------------------------------------------------------------

    @classmethod
    def build(cls, weights: Sequence[Any] | np.ndarray, strata: Sequence[Any] | None = None,
              psus: Sequence[Any] | None = None, fpc: Sequence[Any] | None = None, *,
              lonely_psu: str = "fail", row_names: Sequence[str] | None = None) -> Design:
        """A design from frame columns (one entry per respondent). DesignError names the row
        (`row_names[i]`, else "row i+1") and the problem; see the module docstring."""
        n = len(weights)

        def where(i: int) -> str:
            return row_names[i] if row_names is not None else f"row {i + 1}"

        if lonely_psu not in LONELY_PSU:
            raise DesignError(f"lonely_psu must be one of {', '.join(LONELY_PSU)}, got "
                              f"{lonely_psu!r}")
        if n == 0:
            raise DesignError("the design has no respondents")
        w = _numbers(weights, "weight", where)
        bad = np.flatnonzero(~(w > 0))
        if bad.size:
            i = int(bad[0])
            raise DesignError(f"{where(i)}: weight {_shown(weights[i])} must be positive (a "
                              "respondent with weight 0 represents nobody: leave them out of "
                              "the frame)", {"row": i, "field": "weight"})
        big = np.flatnonzero(w > MAX_WEIGHT)
        if big.size:
            i = int(big[0])
            raise DesignError(f"{where(i)}: weight {_shown(weights[i])} is above {MAX_WEIGHT:g}; "
                              "a weight is how many units a respondent stands for (1 / the "
                              "selection probability)", {"row": i, "field": "weight"})
        for name, column in (("stratum", strata), ("PSU", psus), ("fpc", fpc)):
            if column is not None and len(column) != n:
                raise DesignError(f"{name} has {len(column)} entries for {n} weights")
        stratum_labels, stratum_codes = _labels(strata, n, "stratum", where)
        if psus is None:
            psu_codes = np.arange(n, dtype=np.int64)
            psu_labels = tuple((stratum_labels[c], str(i + 1))
                               for i, c in enumerate(stratum_codes.tolist()))
        else:
            own_labels, own_codes = _labels(psus, n, "PSU", where)
            pairs, psu_codes = unique_keys(stratum_codes * len(own_labels) + own_codes,
                                           len(stratum_labels) * len(own_labels))
            psu_labels = tuple((stratum_labels[int(pair) // len(own_labels)],
                                own_labels[int(pair) % len(own_labels)]) for pair in pairs)
        h = len(stratum_labels)
        psu_stratum = np.zeros(len(psu_labels), dtype=np.int64)
        psu_stratum[psu_codes] = stratum_codes
        sampled = np.bincount(psu_stratum, minlength=h)
        population = _population(fpc, stratum_codes, sampled, stratum_labels, where)
        lonely = [s for s in range(h) if sampled[s] == 1 and population[s] != 1]
        if lonely and lonely_psu == "fail":
            names = ", ".join(repr(stratum_labels[s]) for s in lonely[:5])
            raise DesignError(
                f"{len(lonely)} stratum(s) with a single PSU ({names}): its variance cannot be "
                "estimated from one PSU. Merge it with a similar stratum, or choose what to do "
                "with --lonely-psu (lonely_psu; R's survey.lonely.psu): remove, certainty, adjust "
                "or average",
                {"strata": [stratum_labels[s] for s in lonely]})
        return cls(weights=w, strata=stratum_codes, psus=psu_codes,
                   stratum_labels=stratum_labels, psu_labels=psu_labels,
                   population_psus=population, lonely_psu=lonely_psu)

    @classmethod
    def simple_random_sample(cls, n: int, population: float | None = None) -> Design:
        """n respondents with weight 1 (or N/n with a population size N, then with its fpc),
        one stratum, each their own PSU: today's estimates are this design's."""
        weight = 1.0 if population is None else population / n
        fpc = None if population is None else [population] * n
        return cls.build(np.full(n, weight), fpc=fpc)

    # --- facts ----------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return int(self.weights.size)

    @property
    def stratum_count(self) -> int:
        return len(self.stratum_labels)

    @property
    def psu_count(self) -> int:
        return len(self.psu_labels)

    @property
    def degrees_of_freedom(self) -> int:
        """The design's degrees of freedom for linearized variances: PSUs minus strata (R's
        `degf`), what t intervals and the precision of a variance estimate rest on."""
        return self.psu_count - self.stratum_count

    @property
    def has_fpc(self) -> bool:
        return bool(np.isfinite(self.population_psus).any())

    @property
    def sampling_fractions(self) -> np.ndarray:
        """n_h / N_h per stratum (0 without an fpc)."""
        with np.errstate(divide="ignore"):
            return np.where(np.isfinite(self.population_psus),
                            self.sampled_psus / self.population_psus, 0.0)

    @property
    def calibrated(self) -> bool:
        return bool(self.calibration)

    def describe(self) -> str:
        """One line naming the design, for reports ("stratified cluster sample: ...")."""
        h, p, n = self.stratum_count, self.psu_count, self.n
        kind = ("stratified " if h > 1 else "") + ("cluster sample" if p < n else "sample")
        w = self.base_weights
        assert w is not None
        parts = [f"{h} strat{'a' if h != 1 else 'um'}" if h > 1 else "",
                 f"{p:,} PSUs" if p < n else "",
                 f"{n:,} respondents",
                 ("equal weights" if np.ptp(w) == 0 else
                  f"weights {w.min():.4g} to {w.max():.4g}"),
                 "with fpc" if self.has_fpc else ""]
        text = f"{kind}: " + ", ".join(part for part in parts if part)
        if self.lonely_psu != "fail" and (self.sampled_psus == 1).any():
            text += f"; single-PSU strata: {self.lonely_psu}"
        for step in self.calibration:
            text += f"; {step.describe()}"
        return text

    def with_weights(self, weights: np.ndarray, step: Any) -> Design:
        """This design calibrated: `weights` replace the current ones and `step` (how they were
        obtained) is appended to the calibration steps."""
        if not np.isfinite(weights).all():
            raise CalibrationError(f"{step.describe()}: the calibrated weights are not finite "
                                   "numbers (totals far beyond the sample's weights?)")
        return replace(self, weights=weights, base_weights=self.base_weights,
                       calibration=(*self.calibration, step))


# --- frame values ---------------------------------------------------------------------------


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _numbers(values: Sequence[Any] | np.ndarray, name: str, where: Any) -> np.ndarray:
    """Floats from numbers or numeric text; DesignError naming the first missing, non-numeric
    or non-finite entry."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        out = values.astype(np.float64)
    else:
        out = np.empty(len(values))
        for i, value in enumerate(values):
            if value is None or (isinstance(value, str) and not value.strip()):
                raise DesignError(f"{where(i)}: {name} is missing", {"row": i, "field": name})
            if isinstance(value, bool):
                raise DesignError(f"{where(i)}: {name} must be a number, not a boolean",
                                  {"row": i, "field": name})
            try:
                out[i] = float(value)
            except (TypeError, ValueError):
                raise DesignError(f"{where(i)}: {name} {_shown(value)} is not a number",
                                  {"row": i, "field": name}) from None
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        i = int(bad[0])
        what = "is missing" if math.isnan(out[i]) else "must be finite"
        raise DesignError(f"{where(i)}: {name} {what}", {"row": i, "field": name})
    return out


def _labels(values: Sequence[Any] | np.ndarray | None, n: int, name: str,
            where: Any) -> tuple[tuple[str, ...], np.ndarray]:
    """(sorted labels, codes) of a stratum/PSU column; every entry must be present (a number
    or non-empty text). Integer and text (numpy str) arrays take a vectorized path (10^6 rows in
    milliseconds, or a second for text)."""
    if values is None:
        return ("(all)",), np.zeros(n, dtype=np.int64)
    if isinstance(values, NumberedLabels):
        return _numbered_labels(values, name, where)
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        uniques, codes = np.unique(values, return_inverse=True)
        return tuple(str(u) for u in uniques.tolist()), codes.reshape(-1).astype(np.int64)
    if isinstance(values, np.ndarray) and values.dtype == object:
        found = _text_labels(values, n, name, where)
        if found is not None:
            return found
    if isinstance(values, np.ndarray) and values.dtype.kind == "U":  # text labels, vectorized
        stripped = np.char.strip(values)
        empty = np.flatnonzero(np.char.str_len(stripped) == 0)
        if empty.size:
            i = int(empty[0])
            raise DesignError(f"{where(i)}: {name} is missing", {"row": i, "field": name})
        uniques, codes = np.unique(stripped, return_inverse=True)
        return tuple(uniques.tolist()), codes.reshape(-1).astype(np.int64)
    text = []
    for i, value in enumerate(values):
        if (value is None or isinstance(value, bool | np.bool_)
                or (isinstance(value, float) and not math.isfinite(value))
                or (isinstance(value, str) and not value.strip())):
            raise DesignError(f"{where(i)}: {name} is missing", {"row": i, "field": name})
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text.append(str(value).strip())
    uniques, codes = np.unique(np.array(text, dtype=str), return_inverse=True)
    return tuple(uniques.tolist()), codes.reshape(-1).astype(np.int64)


def _numbered_labels(values: NumberedLabels, name: str,
                     where: Any) -> tuple[tuple[str, ...], np.ndarray]:
    """`_labels` of labels numbered by a database: the labels used, stripped, checked and
    sorted once, and the codes renumbered to them (as `_text_labels` numbers the texts)."""
    codes = np.asarray(values.codes, dtype=np.int64)
    k = len(values.labels)
    if codes.size and (int(codes.min()) < -1 or int(codes.max()) >= k):
        raise DesignError(f"a {name} code is not one of the {k:,} numbered labels")
    shifted = codes + 1  # -1 (missing) is 0
    used = np.flatnonzero(np.bincount(shifted, minlength=k + 1)[1:])
    stripped = [str(values.labels[c]).strip() for c in used.tolist()]
    missing = np.zeros(k + 1, dtype=bool)
    missing[0] = True
    missing[[int(c) + 1 for c, t in zip(used.tolist(), stripped, strict=True) if not t]] = True
    bad = np.flatnonzero(missing[shifted])
    if bad.size:
        i = int(bad[0])
        raise DesignError(f"{where(i)}: {name} is missing", {"row": i, "field": name})
    labels = sorted(set(stripped))
    position = {label: j for j, label in enumerate(labels)}
    renumber = np.zeros(k, dtype=np.int64)
    renumber[used] = [position[t] for t in stripped]
    return tuple(labels), renumber[codes]


def _text_labels(values: np.ndarray, n: int, name: str,
                 where: Any) -> tuple[tuple[str, ...], np.ndarray] | None:
    """`_labels` of an object array of text (a database's labels): each distinct text
    numbered by a dict in one pass, then only the distinct ones stripped, checked and
    sorted (10^6 rows of a few thousand labels in about 0.15 s, where numpy's sort of
    the texts took 0.6 s). None when an entry is not text (the general path then)."""
    texts = values.tolist()
    first_seen = dict.fromkeys(texts)
    if not all(isinstance(t, str) for t in first_seen):
        return None
    number = {t: i for i, t in enumerate(first_seen)}
    codes = np.fromiter(map(number.__getitem__, texts), dtype=np.int64, count=n)
    stripped = [t.strip() for t in first_seen]
    empty = [i for i, t in enumerate(stripped) if not t]
    if empty:  # the first row of the first-seen empty text is the first empty row
        i = int(np.flatnonzero(codes == empty[0])[0])
        raise DesignError(f"{where(i)}: {name} is missing", {"row": i, "field": name})
    labels = sorted(set(stripped))
    position = {label: j for j, label in enumerate(labels)}
    renumber = np.array([position[t] for t in stripped], dtype=np.int64)
    return tuple(labels), renumber[codes]


def _population(fpc: Sequence[Any] | None, strata: np.ndarray, sampled: np.ndarray,
                labels: tuple[str, ...], where: Any) -> np.ndarray:
    """N_h per stratum from per-row fpc values (population PSU counts, or fractions when all
    are <= 1); inf where there is none."""
    h = len(labels)
    if fpc is None:
        return np.full(h, np.inf)
    values = _numbers(fpc, "fpc", where)
    bad = np.flatnonzero(values <= 0)
    if bad.size:
        i = int(bad[0])
        raise DesignError(f"{where(i)}: fpc {values[i]:g} must be positive (a population "
                          "size, or a sampling fraction in (0, 1])", {"row": i, "field": "fpc"})
    fractions = bool((values <= 1).all())
    if not fractions and (values < 1).any():
        i = int(np.flatnonzero(values < 1)[0])
        raise DesignError(f"{where(i)}: fpc {values[i]:g} is a fraction where other rows give "
                          "population sizes: give all as sizes (>= 1) or all as fractions",
                          {"row": i, "field": "fpc"})
    first = np.full(h, -1, dtype=np.int64)
    first[strata[::-1]] = np.arange(values.size - 1, -1, -1)  # each stratum's first row
    population = values[first]
    differ = np.flatnonzero(values != population[strata])
    if differ.size:
        i = int(differ[0])
        s = int(strata[i])
        raise DesignError(f"{where(i)}: fpc {values[i]:g} differs from {population[s]:g} "
                          f"given for other rows of stratum {labels[s]!r}: the fpc is one "
                          "number per stratum", {"row": i, "field": "fpc"})
    if fractions:
        population = sampled / population
    huge = np.flatnonzero(population > MAX_POPULATION)
    if huge.size:
        s = int(huge[0])
        said = "the sampling fraction implies" if fractions else "the fpc says"
        raise DesignError(f"stratum {labels[s]!r}: {said} {population[s]:g} PSUs in the "
                          f"population, above {MAX_POPULATION:g}",
                          {"stratum": labels[s], "field": "fpc"})
    short = np.flatnonzero(population < sampled - 1e-9)
    if short.size:
        s = int(short[0])
        raise DesignError(f"stratum {labels[s]!r}: the fpc says {population[s]:g} PSUs in the "
                          f"population, fewer than the {sampled[s]} sampled",
                          {"stratum": labels[s], "field": "fpc"})
    return population
