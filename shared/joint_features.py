"""How one question's reports enter a joint (crosstab) estimate: integer features per report and
the linear maps that turn them into per-report unbiased estimators (docs/crosstabs.md).

Every report y becomes an integer feature row φ̃(y) = (1, φ(y)) of width F: a one-hot of the
report (GRR, binary RR, two layers, Hadamard response, the ordinal exponential mechanism), the
support bits of the k values (unary encodings, subset selection, local hashing), or for integer
questions a one-hot over a finite partition of ℤ plus y and y². Then, for each cell a (an
option, or a bin of an integer question):

    X_a(y) = B[a]·φ̃(y)   with E[X_a | true answer x] = [x in cell a]   (unbiased indicator)
    X_a(y)² = D[a]·φ̃(y)                                               (its square, exactly)
    Y(y) = m·φ̃(y), Y² = s·φ̃(y) with E[Y | x] = x                     (integer questions)

Because both X and X² are linear in φ̃, the integer matrix G = Σ φ̃₁ φ̃₂ᵀ over reports holds
every sum a joint estimate and its sample variance need (see `crosstab.py`). `expected` is
E[φ̃ | x] for each true answer x (columns), so V = D·expected gives E[X² | x] exactly: the
exact and worst-case variances come from it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .errors import CrosstabError
from .joint_encoder import Encoder, with_constant
from .joint_sets import set_encoder
from .joint_values import value_encoder
from .mechanisms.base import JointReading, Mechanism
from .mechanisms.geometric import Geometric
from .mechanisms.pure import PureProtocol
from .mechanisms.set_base import SetMechanism

# Integer questions with more answers than this get their exact variances on a grid of answers
# (every edge and its neighbours, the range ends, and evenly spaced points).
EXACT_ANSWERS_MAX = 4096
MAX_BINS = 64
MAX_CELLS = 1024  # options of a question in a crosstab (its matrices are k x k)
# Report kinds that are numbers, which `bins` are meant for: an integer question's binned
# reports take them; a number read by its mean (joint_values.py) refuses them naming itself.
NUMBER_REPORTS = (JointReading.WHOLE_NUMBER, JointReading.VALUE)
# Integer reports up to this size give y² exactly in float64.
_FLOAT_EXACT_ABS = 2**26


def encoder_for_question(question: Any, mechanism: Mechanism,
                         bins: Sequence[int] | None = None) -> Encoder:
    """The encoder of a survey question: a question whose type scores its options (ordinal:
    the unit's `scores`) also carries its mean score."""
    encoder = encoder_for(mechanism, bins)
    return encoder if question.unit.scores(question) is None else with_scores(encoder)


# Why a mechanism's reports cannot enter a crosstab, in the words of whoever declared one.
JOINT_REFUSALS = {
    "asked_geometric": "it is an integer follow-up asked only after randomized answers (skip "
                       "logic), sent as an [asked, number] pair that no joint estimator reads; "
                       "the report gives its share not asked and its mean among those asked",
}


def with_scores(encoder: Encoder) -> Encoder:
    """The encoder with a per-report unbiased mean score (options scored 1..k), where its
    square is linear in the features too: index reports (one-hot features), whose every
    function is linear. Support-set reports (OUE, SUE, SS, OLH) are left without: the square
    of a sum of support bits has cross terms the features do not carry."""
    if not encoder.index_reports:
        return encoder
    k = len(encoder.cells)
    scores = np.arange(1, k + 1, dtype=float)
    mean = scores @ encoder.estimator
    return replace(encoder, mean=mean, mean_square=mean**2, answers=scores,
                   mean_note="options scored 1..k")


def encoder_for(mechanism: Mechanism, bins: Sequence[int] | None = None) -> Encoder:
    """The encoder of a question's mechanism (integer questions: `bins` are the inner edges)."""
    if mechanism.joint_reports == JointReading.VALUE:  # a number read by its mean: joint_values
        return value_encoder(mechanism, bins)
    if mechanism.joint_reports == JointReading.WHOLE_NUMBER:
        if isinstance(mechanism, Geometric):
            return _geometric(mechanism, bins)
        return _disclosed_integer(mechanism, bins)
    if isinstance(mechanism, SetMechanism):  # a set of options, one at a time: joint_sets.py
        if bins is not None:
            raise CrosstabError(f"bins apply to integer questions; {mechanism.question_id!r} "
                                "is not one")
        return set_encoder(mechanism)
    if mechanism.k > MAX_CELLS:
        raise CrosstabError(f"{mechanism.question_id!r} has {mechanism.k} options; a crosstab "
                            f"takes questions of at most {MAX_CELLS}")
    if bins is not None:
        raise CrosstabError(f"bins apply to integer questions; {mechanism.question_id!r} "
                            "is not one")
    if mechanism.joint_reports == JointReading.INDEX:
        channel, inverse = mechanism.index_channel()
        return _one_hot(mechanism, inverse, channel)
    if mechanism.joint_reports == JointReading.SUPPORT_BITS:
        assert isinstance(mechanism, PureProtocol)
        return _supports(mechanism)
    raise CrosstabError(f"a crosstab cannot take {mechanism.question_id!r}: "
                        + JOINT_REFUSALS.get(mechanism.name,
                                             f"its mechanism {mechanism.name!r} has no joint "
                                             "estimator"))


def _identity(index: np.ndarray) -> np.ndarray:
    return np.asarray(index, dtype=np.int64)


def _one_hot(mechanism: Mechanism, inverse: np.ndarray, channel: np.ndarray) -> Encoder:
    """Index reports: X_a(y) = M[a, y] for the channel inverse M = (Aᵀ)⁻¹ (any function of y is
    linear in its one-hot, so X² is D = M∘M)."""
    k, size = inverse.shape
    estimator = np.hstack([np.zeros((k, 1)), inverse])
    square = np.hstack([np.zeros((k, 1)), inverse**2])
    expected = np.vstack([np.ones((1, channel.shape[0])), channel.T])

    def featurize(reports: np.ndarray) -> np.ndarray:
        index = np.asarray(reports).astype(np.int64).reshape(-1)
        out = np.zeros((index.size, size + 1))
        out[:, 0] = 1.0
        out[np.arange(index.size), index + 1] = 1.0
        return out

    return Encoder(mechanism.question_id, mechanism.name, tuple(mechanism.labels), estimator,
                   square, expected, np.eye(k), featurize, _identity, index_reports=True)


def _supports(mechanism: PureProtocol) -> Encoder:
    """Support-set reports: φ = the k support bits S_v, X_a = (S_a - q)/(p - q) and, as S² = S,
    X_a² = (S_a(1 - 2q) + q²)/(p - q)²."""
    k = mechanism.k
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    estimator = np.hstack([np.full((k, 1), -q / (p - q)), np.eye(k) / (p - q)])
    square = np.hstack([np.full((k, 1), q * q / (p - q) ** 2),
                        np.eye(k) * (1 - 2 * q) / (p - q) ** 2])
    expected = np.vstack([np.ones((1, k)), np.full((k, k), q) + (p - q) * np.eye(k)])
    return Encoder(mechanism.question_id, mechanism.name, tuple(mechanism.labels), estimator,
                   square, expected, np.eye(k),
                   lambda reports: with_constant(mechanism.support_bits(reports)), _identity)


# --- integer questions ---------------------------------------------------------------------


def default_bins(low: int, high: int) -> tuple[int, ...]:
    """Inner edges when the analyst gives none: one bin per value up to 10 values, else four
    bins of (nearly) equal width."""
    k = high - low + 1
    if k <= 10:
        return tuple(range(low + 1, high + 1))
    return tuple(sorted({low + (k * i) // 4 for i in range(1, 4)}))


def parse_bins(text: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """Bin edges from "0,5,10" (or a list of ints); None when not given."""
    if text is None or text == "":
        return None
    if isinstance(text, str):
        try:
            values = [int(part) for part in text.split(",")]
        except ValueError:
            raise CrosstabError(f"bins must be comma-separated integers, got {text!r}") from None
    else:
        values = list(text)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise CrosstabError("bins must be integers")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise CrosstabError("bin edges must be strictly increasing")
    return tuple(values)


def bins_for_pair(bins: Sequence[int] | None, questions: tuple[str, str],
                  integer: tuple[bool, bool]) -> tuple[tuple[int, ...] | None,
                                                      tuple[int, ...] | None]:
    """(row bins, column bins) from one `bins` for whichever of two questions is an integer
    one; refused when neither is, rather than silently ignored."""
    if bins is None:
        return None, None
    if not any(integer):
        raise CrosstabError(f"bins apply to integer questions; neither {questions[0]!r} nor "
                            f"{questions[1]!r} is one")
    edges = tuple(bins)
    return (edges if integer[0] else None), (edges if integer[1] else None)


def survey_pair_bins(survey: Any, pair: tuple[str, str], bins: str | None
                     ) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """`--bins` text for a crosstab of two of `survey`'s questions: (row bins, column bins).

    A pair naming a question the survey lacks gets no bins here: the caller (planner,
    simulation) then refuses the question itself, with its own message.
    """
    numeric = {q.id: q.unit.numeric for q in survey.questions}  # bins apply to numbers
    pair = (pair[0].partition(":")[0], pair[1].partition(":")[0])  # "q:option" sides too
    if not all(qid in numeric for qid in pair):
        return None, None
    return bins_for_pair(parse_bins(bins), pair, (numeric[pair[0]], numeric[pair[1]]))


def bin_edges(low: int, high: int, bins: Sequence[int] | None) -> tuple[int, ...]:
    """The inner edges within (low, high]: edges at or below `low` or above `high` only repeat
    the range's own ends, so they are dropped; at least one must remain."""
    if bins is None:
        return default_bins(low, high)
    inner = tuple(e for e in bins if low < e <= high)
    if len(inner) >= MAX_BINS:
        raise CrosstabError(f"at most {MAX_BINS} bins")
    if not inner:
        raise CrosstabError(f"bins {','.join(map(str, bins))} do not split [{low}, {high}]: "
                            f"give at least one edge e with {low} < e <= {high}")
    return inner


def _bin_label(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _disclosed_integer(mechanism: Mechanism, bins: Sequence[int] | None) -> Encoder:
    """A disclosed integer question: its report is the answer, the geometric encoder with no
    noise (a = 0: the filter below is the bin's indicator itself, the noise variance 0)."""
    labels = mechanism.labels
    assert isinstance(labels, range)
    return _integer_encoder(mechanism, labels.start, labels.stop - 1, 0.0, bins)


def _geometric(mechanism: Geometric, bins: Sequence[int] | None) -> Encoder:
    return _integer_encoder(mechanism, mechanism.low, mechanism.high,
                            math.exp(-float(mechanism.rate)), bins)


def _integer_encoder(mechanism: Mechanism, low: int, high: int, a: float,
                     bins: Sequence[int] | None) -> Encoder:
    """Integer reports y = x + Z, Z two-sided geometric with a = e^-rate.

    Deconvolution is a 3-tap filter: Z's generating function is (1-a)²/((1-at)(1-a/t)), so for
    any bounded h, g(y) = [(1+a²)h(y) - a·h(y-1) - a·h(y+1)]/(1-a)² has E[g(x+Z)] = h(x)
    exactly. With h the bin's indicator, g is constant between the points {e-1, e, e+1} of each
    edge e, so a one-hot over that finite partition of ℤ carries X and X² exactly; y and y²
    carry the mean.
    """
    edges = bin_edges(low, high, bins)
    starts = (low, *edges)
    ends = (*(e - 1 for e in edges), high)
    cells = tuple(_bin_label(s, e) for s, e in zip(starts, ends, strict=True))
    scale = (1 - a) ** 2
    points = np.array(sorted({e + d for e in edges for d in (-1, 0, 1)}), dtype=np.int64)
    pieces = points.size + 1  # (-inf, P0), [P0, P1), ..., [P_last, inf)
    representative = np.concatenate([[points[0] - 1], points])  # a member of each piece

    def bin_of(y: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(edges), y, side="right")

    m = len(cells)
    g = np.zeros((m, pieces))
    for shift, weight in ((0, 1 + a * a), (-1, -a), (1, -a)):
        hit = bin_of(representative + shift)
        g[hit, np.arange(pieces)] += weight
    g /= scale
    width = 1 + pieces + 2
    estimator = np.zeros((m, width))
    estimator[:, 1:1 + pieces] = g
    square = np.zeros((m, width))
    square[:, 1:1 + pieces] = g**2
    mean = np.zeros(width)
    mean[-2] = 1.0
    mean_square = np.zeros(width)
    mean_square[-1] = 1.0

    answers = _answer_grid(low, high, edges)
    noise_var = 2 * a / (1 - a) ** 2
    expected = np.zeros((width, answers.size))
    expected[0] = 1.0
    # P[x + Z in piece j] from the CDF of Z: P[Z <= t] = a^-t/(1+a) (t < 0), 1 - a^(t+1)/(1+a).
    bounds = np.concatenate([points, [np.iinfo(np.int64).max]])
    below = np.zeros(answers.size)
    for j, upper in enumerate(bounds):
        if upper == np.iinfo(np.int64).max:
            cdf = np.ones(answers.size)
        else:
            t = (upper - 1 - answers).astype(float)  # P[x + Z <= upper - 1]
            cdf = np.where(t < 0, a ** np.maximum(-t, 0) / (1 + a),
                           1 - a ** np.maximum(t + 1, 0) / (1 + a))
        expected[1 + j] = cdf - below
        below = cdf
    expected[-2] = answers
    expected[-1] = answers.astype(float) ** 2 + noise_var
    membership = np.zeros((m, answers.size))
    membership[bin_of(answers), np.arange(answers.size)] = 1.0

    def featurize(reports: np.ndarray) -> np.ndarray:
        y = np.asarray(reports, dtype=np.int64).reshape(-1)
        exact = y.size == 0 or int(np.abs(y).max()) <= _FLOAT_EXACT_ABS
        out = np.zeros((y.size, width), dtype=np.float64 if exact else object)
        out[:, 0] = 1
        out[np.arange(y.size), 1 + np.searchsorted(points, y, side="right")] = 1
        if exact:
            out[:, -2] = y
            out[:, -1] = y.astype(np.float64) ** 2
        else:
            values = [int(v) for v in y]
            out[:, -2] = values
            out[:, -1] = [v * v for v in values]
        return out

    return Encoder(mechanism.question_id, mechanism.name, cells, estimator, square, expected,
                   membership, featurize, lambda index: bin_of(low + np.asarray(index)), mean,
                   mean_square, answers, tuple(edges), (width - 2, width - 1))


def _answer_grid(low: int, high: int, edges: Sequence[int]) -> np.ndarray:
    """Every answer, or for wide ranges the ends, each edge's neighbourhood and an even grid."""
    if high - low + 1 <= EXACT_ANSWERS_MAX:
        return np.arange(low, high + 1, dtype=np.int64)
    grid = set(np.linspace(low, high, 1025).round().astype(np.int64).tolist())
    for e in edges:
        grid.update(v for v in range(e - 8, e + 8) if low <= v <= high)
    return np.array(sorted(grid), dtype=np.int64)


# --- groups: a question's declared group and the rest, as a two-cell side ------------------


def group_encoder(encoder: Encoder, name: str, members: Sequence[int]) -> Encoder:
    """The side "group `name` / the rest" of an option question: X_G = Σ_{a in G} X_a.

    Its square must be linear in the features too. For index reports (one-hot features) every
    function of the report is, so X_G(y)² = (c + s_y)² with s = Σ_{a in G} B[a] exactly. For
    support-set reports X_G² has cross terms S_a·S_b that the features do not carry: refused.
    The features are the question's own, so a declared crosstab of the question serves its
    groups too.
    """
    if not encoder.index_reports:
        raise CrosstabError(f"group {name!r} of {encoder.question_id!r} cannot be a crosstab "
                            f"side: {encoder.mechanism} reports support sets of values, whose "
                            "group sums have no exact per-report square; cross the question "
                            "itself and read the group's options")
    k = len(encoder.cells)
    inside = np.zeros(k, dtype=bool)
    inside[list(members)] = True
    if inside.all() or not inside.any():
        raise CrosstabError(f"group {name!r} of {encoder.question_id!r} must leave out at "
                            "least one option and hold at least one")
    sums = np.stack([encoder.estimator[inside].sum(axis=0),
                     encoder.estimator[~inside].sum(axis=0)])
    constant = sums[:, :1]  # one-hot features: X(y) = constant + sums[1 + y]
    square = np.hstack([constant**2, (constant + sums[:, 1:]) ** 2 - constant**2])
    membership = np.stack([encoder.membership[inside].sum(axis=0),
                           encoder.membership[~inside].sum(axis=0)])
    cell_side = np.where(inside, 0, 1)
    return replace(encoder, cells=(name, f"not {name}"), estimator=sums, square=square,
                   membership=membership,
                   cell_of=lambda index: cell_side[encoder.cell_of(np.asarray(index))],
                   mean=None, mean_square=None, answers=None, mean_note=None, group=name)
