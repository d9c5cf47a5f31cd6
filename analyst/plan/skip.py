"""Planning a question with a "not asked" value (skip logic, docs/skip-logic.md): what the
extra value costs in respondents.

A follow-up whose condition reads a randomized answer is sent by everyone, as "not asked" when
it does not apply, and what an analyst reads is each option's share (or the mean) AMONG THOSE
ASKED, a ratio over the estimated share asked π. Its one-report variance (times n) is that of
the linearized ratio u = (X_j − R·(1 − X_na))/π, respondents as a random sample:
    V = Σ_y P[y]·u(y)²   (index reports: P[y] from the channel at the truth, u from its inverse)
worst case over the share R among those asked (a grid of R in [0, 1]: the rest of those asked
on one other option; the channel of every mechanism offered is symmetric enough that spreading
it differs little), at the share asked π the designer expects (`--asked`). An integer
follow-up plans its mean among those asked (asked_geometric.mean_variance).

Each plan also shows the same question had its condition read disclosed answers only (those
not asked send nothing): the ordinary mechanism over the k options with π·n reports, V/π. The
ratio of the two is what hiding the skip pattern costs.

Special values ("Don't know", "Prefer not to say": docs/survey-definition.md) are planned the
same way: the estimates are among those who give an answer, a share `answered` (`--answered`,
times `--asked` for a follow-up), every extra value in the mechanism's domain; the last row is
the question without special values (WITHOUT_SPECIAL), where the ordinary mechanism over the k
options would have the answerers' reports only. The ratio is what offering them costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.mechanisms import MECHANISMS, choose_mechanism, margin_variance
from ldpsurvey.shared.mechanisms.asked_geometric import AskedGeometric
from ldpsurvey.shared.question_types.base import extra_values
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Question

from .rows import (
    LDP,
    TWO_SERVER,
    TWO_SERVER_LOCAL,
    ModeComparison,
    PlanRow,
    QuestionPlan,
    check_target,
    mode_rows,
    plan_row,
)

DEFAULT_ASKED = 0.5
_GRID = np.linspace(0.0, 1.0, 51)
PUBLIC = "if its condition read disclosed answers only"
WITHOUT_SPECIAL = "without special values"
DEFAULT_ANSWERED = 0.9


def answering_share(question: Question, asked: float, answered: float) -> float:
    """The share of respondents an estimate among those who gave an answer is over: `asked`
    for a follow-up, times `answered` where the question has special values."""
    return ((asked if question.not_asked else 1.0)
            * (answered if getattr(question, "special", None) else 1.0))


def without_extra(question: Question) -> str:
    """The last row's name: the same question without its extra values."""
    return PUBLIC if question.not_asked else WITHOUT_SPECIAL


def among_asked_variance(name: str, k: int, epsilon: float, asked: float,
                         extra: int = 1) -> float:
    """Worst-case one-report variance of an option's share among those asked (k options plus
    `extra` values beyond them, "not asked" and special values, a share `asked` of respondents
    giving an answer, the rest on the first extra value)."""
    cls = MECHANISMS[name]
    mechanism = cls(epsilon, (*(f"o{i}" for i in range(k)), NOT_ASKED,
                              *(f"s{i}" for i in range(extra - 1))))
    channel, inverse = mechanism.index_channel()
    worst = 0.0
    for share in _GRID:
        f = np.zeros(k + extra)
        f[0], f[1], f[k] = asked * share, asked * (1 - share), 1 - asked
        reports = f @ channel
        u = (inverse[0] - share * (1.0 - inverse[k:].sum(axis=0))) / asked
        worst = max(worst, float(reports @ (u * u)))
    return worst


def plan_not_asked(question: Question, *, margin: float | None, n: int | None,
                   confidence: float, asked: float = DEFAULT_ASKED) -> QuestionPlan:
    """A row per mechanism a question with a "not asked" value may use (the configured one
    marked), and the same question with a condition on disclosed answers (PUBLIC): each
    option's share among those asked, or the mean of a number (the question's unit says
    which kind of answer it has)."""
    planner = _AmongAsked(margin, n, confidence, asked)
    return question.unit.visit(question, planner)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _AmongAsked:
    """`plan_not_asked` per kind of answer (QuestionType.visit)."""

    margin: float | None
    n: int | None
    confidence: float
    asked: float

    def options(self, question: Question) -> QuestionPlan:
        return plan_shares_among_asked(question, margin=self.margin, n=self.n,
                                       confidence=self.confidence, asked=self.asked)

    def number(self, question: Question) -> QuestionPlan:
        return plan_mean_among_asked(question, margin=self.margin, n=self.n,
                                     confidence=self.confidence, asked=self.asked)


def _check_asked(asked: float) -> None:
    if not 0 < asked <= 1:
        raise PlanError(f"the share asked must lie in (0, 1], got {asked!r}")


def plan_mean_among_asked(question: Question, *, margin: float | None, n: int | None,
                          confidence: float, asked: float = DEFAULT_ASKED) -> QuestionPlan:
    """A number's mean among those asked: its unit's mechanism with a "not asked" value (an
    integer's asked_geometric, a decimal's asked_grid), and its plain mean mechanism had its
    condition read disclosed answers only (PUBLIC), both from `asked_mean_variances`."""
    _check_asked(asked)
    k = len(question.unit.values(question))  # without "not asked"
    (name, variance), (plain, public) = question.unit.asked_mean_variances(question, asked)
    rows = [plan_row(name, variance, margin, n, confidence, True, question.mechanism == name),
            plan_row(f"{plain} {without_extra(question)}", public, margin, n, confidence,
                     False)]
    return QuestionPlan(question=question.id, question_type=question.type, k=k,
                        epsilon=question.epsilon, confidence=confidence, rows=rows,
                        margin_unit=question.unit.margin_unit(question))


def plan_shares_among_asked(question: Question, *, margin: float | None, n: int | None,
                            confidence: float, asked: float = DEFAULT_ASKED) -> QuestionPlan:
    """Each option's share among those asked: a row per mechanism that can carry "not asked"
    (auto's marked), and the ordinary mechanism had its condition read disclosed answers only
    (PUBLIC)."""
    _check_asked(asked)
    unit = question.unit
    k = len(unit.values(question))  # without "not asked"
    names = [name for name in unit.named_not_asked
             if name in unit.auto_not_asked or name == question.mechanism]
    rows: list[PlanRow] = []
    extra = len(extra_values(question))
    for name in names:
        if MECHANISMS[name].misfit(k + extra, question.epsilon) is not None:
            continue
        rows.append(plan_row(name, among_asked_variance(name, k, question.epsilon, asked, extra),
                         margin, n, confidence, name in unit.auto_not_asked
                         and name == _auto(question), question.mechanism == name))
    probe = Question(id=question.id, text=question.text, type=question.type,
                     epsilon=question.epsilon, mechanism="auto", options=question.options)
    plain, _ = choose_mechanism(probe)
    variance = margin_variance(MECHANISMS[plain], unit.shares_planned_as(), k, question.epsilon)
    assert variance is not None
    rows.append(plan_row(f"{plain} {without_extra(question)}", variance / asked, margin, n,
                         confidence, False))
    return QuestionPlan(question=question.id, question_type=question.type, k=k,
                        epsilon=question.epsilon, confidence=confidence, rows=rows,
                        margin_unit=unit.margin_unit(question))


def _auto(question: Question) -> str:
    from ldpsurvey.shared import skip_logic

    name, _ = skip_logic.choose_mechanism(question, 1 << 30, f"questions.{question.id}")
    return name


def describe_special(question: Question, plan: QuestionPlan, share: float) -> str:
    """The one-line description of a question with special values' plan (`share`: of
    respondents who give an answer)."""
    what = ("the mean among those who gave an answer, in the answer's units"
            if plan.margin_unit == "answer units"
            else "each option's share among those who gave an answer, in percentage points")
    extra = " + ".join(repr(v) for v in extra_values(question))
    return (f"{plan.question_type}, k={plan.k} + {extra}, epsilon={plan.epsilon:g}, "
            f"{plan.confidence:.0%} confidence, {share:.0%} of respondents give an answer "
            f"(--answered" + (" x --asked" if question.not_asked else "") + f"); margin on {what}")


def describe_not_asked(plan: QuestionPlan, asked: float) -> str:
    """The plan's one-line description."""
    what = ("the mean among those asked, in the answer's units" if plan.margin_unit ==
            "answer units" else "each option's share among those asked, in percentage points")
    return (f"{plan.question_type}, k={plan.k} + 'not asked', epsilon={plan.epsilon:g}, "
            f"{plan.confidence:.0%} confidence, {asked:.0%} of respondents asked (--asked); "
            f"margin on {what}")


# --- plan --compare-modes of an integer follow-up -----------------------------------------------


def compare_not_asked_integer(question: Question, *, margin: float | None, n: int | None,
                              confidence: float, asked: float = DEFAULT_ASKED) -> Any:
    """The collection modes for an integer question with a "not asked" value, on its mean among
    those asked with a share `asked` of respondents asked (Var = a/n + b/n², worst case over the
    answers among those asked, respondents as a random sample; analyst/plan/modes.py):

    - LDP: asked_geometric at ε (`AskedGeometric.mean_variance`);
    - two servers: a Histogram over the values and "not asked" (shared/two_server/
      among_asked.py): a = (Δ/2)²/π for the answers' spread; b = both servers' noise on the
      functional (values, μ) the estimator uses, 2σ²(Σv² + μ²)/π² at the largest |μ|
      (ranges of at most 255 values; none past that, as publish refuses them);
    - with a local ε0: asked_geometric's pair (shared/two_server/asked_pair.py):
      a = [π(Δ/2)² + σ_Z² + h²·pq/(p − q)²]/π², b = 2σ²(1 + h²/(s(p − q))²)/π² at the pair's
      sensitivity s + R.
    """
    from ldpsurvey.shared import skip_logic
    from ldpsurvey.shared.two_server.asked_pair import pair_scale
    from ldpsurvey.shared.two_server.encoding import clip_bounds
    from ldpsurvey.shared.two_server.noise import SERVERS, noise_plan

    check_target(margin, n, confidence)
    if not 0 < asked <= 1:
        raise PlanError(f"the share asked must lie in (0, 1], got {asked!r}")
    eps = float(getattr(question, "central_epsilon", None) or question.epsilon)
    local = getattr(question, "local_epsilon", None)
    k, low, high = question.k, int(question.min), int(question.max)  # type: ignore[arg-type]
    spread = ((high - low) / 2) ** 2
    pairs: list[tuple[str, str, float | None, float, float]] = [
        (LDP, AskedGeometric.name, None, AskedGeometric.mean_variance(k, eps, asked), 0.0)]
    if k + 1 <= skip_logic.MAX_TWO_SERVER_INTEGER:
        values = np.arange(low, high + 1, dtype=float)
        weights = float(values @ values) + max(low * low, high * high)
        pairs.append((TWO_SERVER, "-", None, spread / asked,
                      SERVERS * noise_plan("histogram", eps).variance * weights / asked**2))
    if local is not None:
        mechanism = AskedGeometric(float(local), range(low, high + 1))
        lo, hi = clip_bounds(mechanism)
        scale = pair_scale(mechanism, hi - lo)
        p, q = float(mechanism.p_star), float(mechanism.q_star)
        h2 = float(mechanism.half) ** 2
        per_report = (asked * spread + mechanism.noise_variance(k, float(local))
                      + h2 * p * q / (p - q) ** 2) / asked**2
        sigma2 = noise_plan("asked_pair", eps, scale + hi - lo).variance
        noise = SERVERS * sigma2 * (1 + h2 / (scale * (p - q)) ** 2) / asked**2
        pairs.append((TWO_SERVER_LOCAL, AskedGeometric.name, float(local), per_report, noise))
    rows = mode_rows(pairs, eps, margin, n, confidence)
    return ModeComparison(question.id, f"integer, mean among the {asked:.0%} asked", k, eps,
                          confidence, "answer units", rows)
