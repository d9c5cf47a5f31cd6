"""What a two-server survey promises each respondent, in plain words (reports, plan, the page).

Two guarantees, by who is looking:
- The leader, the helper or the analyst ALONE sees at most the released noisy totals (and its
  own random-looking shares): each server's noise alone makes every release central ε-DP, so
  one respondent's answers to the whole survey are protected at the composition of the
  releases: one per question and one per declared crosstab (each report is aggregated once,
  and each batch is collected once, so batches compose in parallel). Both totals are stated:
  the plain sum (δ = 0) and the advanced composition bound at the survey's δ
  (shared/composition.py).
- The leader and the helper TOGETHER can put the shares back together: what a device sent is
  then in the open. With a local ε0 that is today's randomized report, so each answer keeps
  ε0-LDP; without one the answer itself is exposed.
The number of reports (and of rejected ones) is released exactly: the guarantee covers what a
respondent answered (substitution of one respondent), not whether they took part.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..composition import DEFAULT_DELTA, Composition, compose
from .plans import central_epsilon, crosstab_epsilon

TWO_SERVER = "two-server"


@dataclass(frozen=True)
class Release:
    """One noisy total the servers release: a question's or a declared crosstab's."""

    name: str
    epsilon: float
    kind: str  # "question" | "crosstab"


@dataclass(frozen=True)
class Guarantees:
    """Both guarantees of one survey, with the numbers behind the sentences."""

    collection: str
    releases: tuple[Release, ...]
    central: Composition | None        # against any one party (two-server mode)
    local: Composition | None          # if the servers collude: the local ε0s (None: none set)
    exposed: tuple[str, ...]           # questions without a local ε0 (exposed on collusion)
    delta: float
    optional: bool = False             # some question may be skipped (its n shows who did)

    @property
    def statements(self) -> list[str]:
        """The guarantee in plain words: one sentence per line."""
        return guarantee_statement(self)

    def to_dict(self) -> dict[str, Any]:
        return {"collection": self.collection,
                "releases": [{"name": r.name, "kind": r.kind, "epsilon": r.epsilon}
                             for r in self.releases],
                "central": None if self.central is None else self.central.to_dict(),
                "local": None if self.local is None else self.local.to_dict(),
                "exposed_if_servers_collude": list(self.exposed), "delta": self.delta,
                "statements": self.statements}


def survey_guarantees(survey: Any) -> Guarantees:
    """The guarantees of a survey (a two-server one, or today's LDP mode for comparison)."""
    settings = getattr(survey, "two_server", None)
    delta = float(getattr(settings, "delta", None) or DEFAULT_DELTA)
    collection = getattr(survey, "collection", "ldp") or "ldp"
    if collection != TWO_SERVER:
        eps = [float(q.epsilon) for q in survey.questions]
        return Guarantees(collection, tuple(Release(q.id, e, "question")
                                            for q, e in zip(survey.questions, eps, strict=True)),
                          None, compose(eps, delta), (), delta)
    releases = [Release(q.id, central_epsilon(q), "question") for q in survey.questions]
    releases += [Release(f"{spec.rows} x {spec.cols}", crosstab_epsilon(survey, spec),
                         "crosstab") for spec in getattr(survey, "crosstabs", ())]
    local_eps = [float(q.local_epsilon) for q in survey.questions
                 if getattr(q, "local_epsilon", None) is not None]
    exposed = tuple(q.id for q in survey.questions
                    if getattr(q, "local_epsilon", None) is None)
    return Guarantees(collection, tuple(releases), compose([r.epsilon for r in releases], delta),
                      compose(local_eps, delta) if local_eps else None, exposed, delta,
                      any(getattr(q, "optional", False) for q in survey.questions))


def crosstabs_sent(survey: Any, answered: Collection[str]) -> list[tuple[Any, float]]:
    """The declared crosstabs a device's upload measures (both questions answered), each with
    its central ε: releases that carry the respondent's answers like the questions' own, so the
    device's ledger and ceilings count them too (the guarantee above does)."""
    return [(spec, crosstab_epsilon(survey, spec)) for spec in getattr(survey, "crosstabs", ())
            if spec.rows in answered and spec.cols in answered]


def guarantee_statement(g: Guarantees) -> list[str]:
    """Plain sentences for respondents and analysts (one function for every surface)."""
    if g.collection != TWO_SERVER:
        assert g.local is not None
        return [f"Each device randomizes every answer before sending it (local differential "
                f"privacy): no server, analyst or eavesdropper sees a true answer. "
                f"Per respondent, the whole survey costs epsilon {g.local.basic:g} "
                f"(the sum over {g.local.k} questions){_advanced(g.local)}."]
    assert g.central is not None
    questions = sum(1 for r in g.releases if r.kind == "question")
    crosstabs = len(g.releases) - questions
    what = f"{questions} question{'s' * (questions != 1)}" + (
        f" and {crosstabs} declared crosstab{'s' * (crosstabs != 1)}" if crosstabs else "")
    lines = [f"Against the leader, the helper or the analyst alone: each server adds its own "
             f"random noise to the totals it releases, and either server's noise alone protects "
             f"you. Your answers to the whole survey are protected at central epsilon "
             f"{g.central.basic:g} (the sum over {what}){_advanced(g.central)}."]
    if g.local is not None and not g.exposed:
        lines.append(f"If the leader and the helper collude: your device randomized each answer "
                     f"before splitting it, so each answer keeps local differential privacy "
                     f"(epsilon {_per_question(g)} per question; {g.local.basic:g} for the whole "
                     f"survey{_advanced(g.local)}).")
    elif g.local is None:
        lines.append("If the leader and the helper collude: your answers are exposed. No local "
                     "epsilon is set, so the two servers together could put the halves back "
                     "together and read every answer; you rely on them not to.")
    else:
        lines.append(f"If the leader and the helper collude: your answers to "
                     f"{_names(g.exposed)} are exposed: the two together could read them (no "
                     f"local epsilon is set for them); the "
                     f"other answers keep local differential privacy (epsilon "
                     f"{g.local.basic:g} for them together{_advanced(g.local)}).")
    lines.append("The number of respondents and of rejected reports is published: the "
                 "guarantee covers what you answered, not whether you took part"
                 + (" or skipped an optional question." if g.optional else "."))
    return lines


def _advanced(c: Composition) -> str:
    """Both totals are always stated; the advanced one is marked when it is not tighter."""
    if c.k < 2:
        return ""
    if c.best == "advanced":
        return f", or {c.advanced:.3g} with delta {c.delta:g} by the advanced composition theorem"
    return (f"; the advanced composition theorem at delta {c.delta:g} gives {c.advanced:.3g}, "
            "no tighter here")


def _per_question(g: Guarantees) -> str:
    assert g.local is not None
    values = sorted(set(g.local.epsilons))
    return f"{values[0]:g}" if len(values) == 1 else f"{values[0]:g} to {values[-1]:g}"


def _names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


__all__ = ["Guarantees", "Release", "guarantee_statement", "survey_guarantees"]
