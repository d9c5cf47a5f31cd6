"""Planning a multiselect question: respondents a margin on every option's share needs.

Each option's share (of respondents who selected it) is estimated like one option of a
categorical question: with one report its variance is at most V1 whatever the truth
(`SetMechanism.set_variances`, worst case: an option nobody or everybody selects), so a margin
m needs n = z²·V1/m² respondents (analyst/plan/rows.py). Rows come in `auto`'s order (the
variance averaged over options, worst case over the truth), which need not be the order of
the worst case: padding and sampling pays most for options almost everyone selects.

`multiselect_table()` is the table of docs/multiselect.md (a test keeps it current):
    python -m ldpsurvey.analyst.plan.multiselect           # prints it
    python -m ldpsurvey.analyst.plan.multiselect --write   # writes it into the doc
"""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.mechanisms import REPORT_SIZE_LIMIT
from ldpsurvey.shared.mechanisms.set_base import SetShape
from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS, set_candidates
from ldpsurvey.shared.survey import Question

from .rows import (
    LDP,
    TWO_SERVER,
    TWO_SERVER_LOCAL,
    ModeComparison,
    QuestionPlan,
    check_target,
    mode_rows,
    plan_row,
)

DOC_KS = (5, 10, 20)
DOC_EPSILONS = (1.0, 2.0, 4.0)
DOC_MARGIN = 0.05


def plan_set(shape: SetShape, epsilon: float, *, margin: float | None = None,
             n: int | None = None, confidence: float = 0.95, configured: str | None = None,
             question_id: str = "") -> QuestionPlan:
    """A row per multiselect mechanism that serves the shape, in auto's order, auto marked."""
    check_target(margin, n, confidence)
    problem = shape.problem()
    if problem is not None:
        raise PlanError(f"{problem[0]}: {problem[1]}")
    ranked = set_candidates(shape, float(epsilon), REPORT_SIZE_LIMIT)
    if not ranked:
        raise PlanError(f"no multiselect mechanism fits k={shape.k} at epsilon={epsilon:g}")
    rows = [plan_row(name, worst, margin, n, confidence, i == 0, name == configured)
            for i, (_, worst, name) in enumerate(ranked)]
    if configured is not None and not any(r.configured for r in rows):
        worst, _ = SET_MECHANISMS[configured].set_variances(shape, epsilon)
        rows.append(plan_row(configured, worst, margin, n, confidence, False, True))
    return QuestionPlan(question=question_id, question_type="multiselect", k=shape.k,
                        epsilon=float(epsilon), confidence=confidence, rows=rows,
                        margin_unit="proportion")


def plan_multiselect(question: Question, *, margin: float | None = None, n: int | None = None,
                     confidence: float = 0.95) -> QuestionPlan:
    return plan_set(question.multiselect, question.epsilon, margin=margin, n=n,
                    confidence=confidence, configured=question.mechanism,
                    question_id=question.id)


def describe_multiselect(shape: SetShape, epsilon: float, confidence: float) -> str:
    least = " (at least one)" if shape.required_min else ""
    return (f"multiselect, k={shape.k} options, at most {shape.max_selected} selected{least}, "
            f"epsilon={epsilon:g}, {confidence:.0%} confidence; margin on each option's share "
            f"of respondents who selected it, in percentage points")


def multiselect_table(ks: tuple[int, ...] = DOC_KS, epsilons: tuple[float, ...] = DOC_EPSILONS,
                      margin: float = DOC_MARGIN) -> str:
    """Markdown: respondents for ±margin on every option's share (worst case), per mechanism,
    for k options and at most m = 1, 3 or k selected; **bold** is auto's pick."""
    lines = ["| k | max_selected | mechanism | " + " | ".join(f"ε = {e:g}" for e in epsilons)
             + " |", "|---:|---:|---|" + "---:|" * len(epsilons)]
    for k in ks:
        for m in sorted({1, 3, k}):
            shape = SetShape(k, m)
            plans = [plan_set(shape, e, margin=margin) for e in epsilons]
            names = [name for name in SET_MECHANISMS
                     if any(r.mechanism == name for p in plans for r in p.rows)]
            for name in names:
                cells = []
                for p in plans:
                    row = next((r for r in p.rows if r.mechanism == name), None)
                    cell = "–" if row is None else f"{row.n:,}"
                    cells.append(f"**{cell}**" if row is not None and row.auto else cell)
                lines.append(f"| {k} | {m} | `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- collection modes (plan --compare-modes, plan of a two-server survey) -------------------


def compare_set_modes(shape: SetShape, epsilon: float, *, local_epsilon: float | None = None,
                      margin: float | None = None, n: int | None = None,
                      confidence: float = 0.95, question: str = "",
                      local_mechanism: str | None = None, not_asked: bool = False) -> Any:
    """LDP (the set mechanism with the least worst case) vs two servers at the same ε, and
    with a local ε0 (analyst/plan/modes.py): Var = a/n + b/n² per option's share, sampling
    included. a is one random respondent's worst-case term (shared/two_server/multiselect.py
    `option_worst`, with p = 1, q = 0 without a local mechanism), b both servers' noise at the
    measurement's sensitivity: min(2m, k) for the answer's bits, 2 for psfo_grr's index, k for
    a local report's bits. `not_asked` (skip logic): the shares of everyone over the options
    and "not asked", every mechanism over k + 1 pseudo-options, the answer's bits with their
    "not asked" entry at Δ = max(min(2m, k), m + 1)."""
    from ldpsurvey.shared.multiselect_not_asked import NOT_ASKED_SET_MECHANISMS
    from ldpsurvey.shared.two_server.multiselect import (
        LOCAL_SET_MECHANISMS,
        not_asked_delta,
        option_worst,
    )
    from ldpsurvey.shared.two_server.noise import SERVERS, noise_plan

    check_target(margin, n, confidence)
    eps = float(epsilon)
    own = shape
    if not_asked:
        shape = SetShape(own.k + 1, own.max_selected, own.required_min)
    allowed = NOT_ASKED_SET_MECHANISMS if not_asked else tuple(SET_MECHANISMS)
    ranked = [r for r in set_candidates(shape, eps, REPORT_SIZE_LIMIT) if r[2] in allowed]
    if not ranked:
        raise PlanError(f"no multiselect mechanism fits k={shape.k} at epsilon={eps:g}")
    ldp = min((option_worst(*(float(x) for x in SET_MECHANISMS[name].probabilities(shape, eps))),
               name) for _, _, name in ranked)
    delta = not_asked_delta(own) if not_asked else own.max_difference()
    pairs: list[tuple[str, str, float | None, float, float]] = [
        (LDP, ldp[1], None, ldp[0], 0.0),
        (TWO_SERVER, "-", None, option_worst(1.0, 0.0),
         SERVERS * noise_plan("multihot", eps, delta).variance)]
    if local_epsilon is not None:
        names = [local_mechanism] if local_mechanism else [
            name for name in LOCAL_SET_MECHANISMS
            if SET_MECHANISMS[name].misfit(shape.k, local_epsilon) is None
            and SET_MECHANISMS[name].shape_misfit(shape) is None]
        options = []
        for name in names:
            p, q = (float(x) for x in SET_MECHANISMS[name].probabilities(shape, local_epsilon))
            kind, delta = ("histogram", 2) if name == "psfo_grr" else ("multihot", shape.k)
            noise = SERVERS * noise_plan(kind, eps, delta).variance / (p - q) ** 2
            options.append((option_worst(p, q), noise, name))
        a, b, name = min(options)
        pairs.append((TWO_SERVER_LOCAL, name, float(local_epsilon), a, b))
    rows = mode_rows(pairs, eps, margin, n, confidence)
    return ModeComparison(question, "multiselect", own.k, eps, confidence, "proportion", rows)


DOC = "docs/multiselect.md"
SECTION = "multiselect-plan"


def updated_doc(text: str) -> str:
    """docs/multiselect.md with its generated table replaced by the current one."""
    import re

    pattern = re.compile(rf"(<!-- generated:{SECTION} -->\n)(.*?)(<!-- /generated:{SECTION} -->)",
                         re.S)
    if not pattern.search(text):
        raise PlanError(f"{DOC} has no <!-- generated:{SECTION} --> section")
    table = multiselect_table()
    return pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(3), text)


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:] == ["--write"]:
        path = Path(__file__).resolve().parents[2] / DOC
        path.write_text(updated_doc(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(multiselect_table())
