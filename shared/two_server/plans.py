"""The noise plan of each release a two-server survey makes: one per question, one per declared
crosstab. The leader and the helper each call these with the signed survey, so both size their
noise from the same declaration (and the estimator reads the same plan back from the batch).

A question's measurement (shared/two_server/encoding.py, its unit's choice): binary -> Count
(Δ = 1), categorical and ordinal -> Histogram (Δ = 2), integer -> Sum of (answer - min)
(Δ = max - min) or, with a local ε0, of the device's geometric report clipped to its accepted
range (Δ = that range's width); multiselect -> its vector (Δ: shared/two_server/multiselect.py).
A declared crosstab is a Histogram over the joint cells (Δ = 2) at the crosstab's central ε:
the smaller of its two questions' (`crosstab_epsilon`).
"""

from __future__ import annotations

from typing import Any

from ..errors import EstimateError
from .encoding import question_encoding
from .noise import NoisePlan, noise_plan


def question_noise_plan(question: Any) -> NoisePlan:
    """The certified noise each server adds to this question's aggregate share: sized for
    its measurement's kind and sensitivity (its unit's encoding, shared/two_server/encoding.py)."""
    epsilon = central_epsilon(question)
    encoding = question_encoding(question)
    return noise_plan(encoding.kind, epsilon, encoding.sensitivity)


def crosstab_epsilon(survey: Any, spec: Any) -> float:
    """A declared crosstab's central ε: its own if the declaration carries one, else the smaller
    of its two questions' (the joint table then says no more about one answer than the less
    private of the two marginals)."""
    own = getattr(spec, "central_epsilon", None)
    if own is not None:
        return float(own)
    return min(central_epsilon(survey.question(spec.rows)),
               central_epsilon(survey.question(spec.cols)))


def key_epsilon(survey: Any, key: str) -> float:
    """The central ε a release key (a question id or a declared crosstab's key) is noised at:
    the one place both servers, the leader's collected batch and the guarantees read it from."""
    for question in survey.questions:
        if question.id == key:
            return central_epsilon(question)
    for spec in getattr(survey, "crosstabs", ()):
        if spec.key == key:
            return crosstab_epsilon(survey, spec)
    raise EstimateError(f"{key!r} is neither a question nor a declared crosstab of the survey")


def crosstab_noise_plan(survey: Any, spec: Any) -> NoisePlan:
    return noise_plan("crosstab", crosstab_epsilon(survey, spec))


def central_epsilon(question: Any) -> float:
    eps = getattr(question, "central_epsilon", None)
    if eps is None:
        raise EstimateError(f"question {question.id!r} has no central_epsilon: a two-server "
                            "survey declares one per question")
    return float(eps)


__all__ = ["central_epsilon", "crosstab_epsilon", "crosstab_noise_plan", "key_epsilon",
           "question_noise_plan"]
