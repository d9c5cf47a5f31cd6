"""The randomized-response designs survey researchers know by name, as exact channels.

- `warner` (Warner 1965): the device shows the statement with probability p, its negation
  otherwise; P(yes | yes) = p, P(yes | no) = 1 - p; ε = |ln(p/(1-p))|.
- `crosswise` (Yu, Tian & Tang 2008): "are your answers to the sensitive statement and to an
  innocuous one the same?" The innocuous answer is drawn ON THE DEVICE with the stated
  `prevalence` π (a birthday in Jan-Mar holds its ε only against whoever does not know the
  birthday); report true = "the same": Warner with p = π.
- `forced_response` (Boruch 1971): with probability `p_truth` the truth; otherwise the device
  forces option j with probability `forced[j]` (these sum to 1 - p_truth).
  P(j | i) = p·1[i = j] + q_j, so ε = max_j ln((p + q_j)/q_j).
- `unrelated_question` (Greenberg et al. 1969): with probability `p_truth` the sensitive
  question, otherwise an innocuous one whose answer the device draws with `prevalence` π_j:
  forced response with q_j = (1 - p_truth)·π_j.

Designs that are not differentially private are refused by name (`NOT_PRIVATE`): in each some
report proves an answer, so no ε bounds what it reveals.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import SurveyError
from .channel_design import (
    BinaryReports,
    ChannelDesign,
    Matrix,
    fraction_table,
    option_names,
    per_option,
    rational,
)

NOT_PRIVATE = {
    "mangat": "Mangat's design has every 'yes' holder answer 'yes', so a 'no' report proves "
              "the answer is no",
    "triangular": "the triangular model's 'circle' report is given only by holders of the "
                  "non-sensitive answer, so it proves that answer",
    "stochastic_lie_detector": "the stochastic lie detector lets non-carriers answer truthfully "
                               "always, so one report proves an answer",
    "cheating_detection": "the cheating-detection model's forced answer is given by one answer "
                          "only, so a report proves an answer",
    "kuk": "Kuk's card design leaves a report impossible under some answer when a deck holds "
           "only one colour",
}


def refuse_not_private(name: str, where: str) -> None:
    """SurveyError for a design that is known and refused because it is not DP."""
    reason = NOT_PRIVATE.get(name)
    if reason is not None:
        raise SurveyError(where, f"{name!r} is not differentially private: {reason}. Use "
                          "forced_response, unrelated_question, warner, crosswise or a matrix "
                          "whose every report is possible under every answer")


class Warner(BinaryReports, ChannelDesign):
    name = "warner"
    question_types = frozenset({"binary"})
    summary = "Warner's design: the statement with probability p, its negation otherwise."
    known_as = "Warner's randomized response"

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        self._check_keys(params, {"p"})
        p = rational(params["p"], f"{self._where}.p")
        self._params = {"p": str(p)}
        return [[p, 1 - p], [1 - p, p]]


    def deniability(self) -> str:
        p = float(self.rows[1][1])
        return (f"your device shows you the statement with probability {p:.0%} and its "
                f"negation otherwise, and sends your yes/no to what it showed: the server never "
                f"learns which one you saw")


class Crosswise(BinaryReports, ChannelDesign):
    name = "crosswise"
    question_types = frozenset({"binary"})
    summary = ("crosswise model with the innocuous answer drawn on the device at a known "
               "prevalence; report true = the two answers agree.")
    known_as = "the crosswise model"

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        self._check_keys(params, {"prevalence"})
        pi = rational(params["prevalence"], f"{self._where}.prevalence")
        self._params = {"prevalence": str(pi)}
        # report index 1 (true) = "same": answer yes and innocuous yes, or no and no.
        return [[pi, 1 - pi], [1 - pi, pi]]


    def deniability(self) -> str:
        pi = float(self.rows[1][1])
        return (f"your device draws a hidden coin that says yes with probability {pi:.0%}, and "
                f"sends only whether your answer and the coin agree")


class ForcedResponse(ChannelDesign):
    name = "forced_response"
    question_types = frozenset({"binary", "categorical"})
    summary = "forced response: the truth with probability p_truth, else a forced option."
    known_as = "forced response"
    reports_an_answer = True  # the truth or a forced option (the unrelated question's too)

    def _report(self, y: int) -> Any:
        return bool(y) if self._binary else y

    def validate_report(self, report: Any) -> Any:
        if self._binary:
            return BinaryReports.validate_report(self, report)  # type: ignore[arg-type]
        return super().validate_report(report)

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        self._binary = labels == (False, True)
        self._check_keys(params, {"p_truth"}, {"forced"})
        p = rational(params["p_truth"], f"{self._where}.p_truth")
        if "forced" in params:
            forced = per_option(params["forced"], labels, f"{self._where}.forced")
        else:  # the usual default: forced options equally likely
            forced = [(1 - p) / len(labels)] * len(labels)
        if p + sum(forced) != 1:
            raise SurveyError(f"{self._where}.forced", f"p_truth + the forced probabilities "
                              f"must sum to exactly 1, they sum to {p + sum(forced)}")
        self._params = {"p_truth": str(p), "forced": fraction_table(forced, labels)}
        return self._channel_of(p, forced)

    def _channel_of(self, p: Fraction, forced: list[Fraction]) -> list[list[Fraction]]:
        zero = [name for name, q in zip(option_names(self._design_labels), forced, strict=True)
                if q == 0]
        if zero:
            raise SurveyError(self._where, f"{self.name} is not differentially private with "
                              f"these parameters: the report {zero[0]!r} is never forced, so "
                              f"it proves the answer {zero[0]!r} (give every option a forced "
                              f"probability > 0)")
        k = len(forced)
        return [[(p if x == y else Fraction(0)) + forced[y] for y in range(k)] for x in range(k)]


    def deniability(self) -> str:
        p = float(Fraction(self._params["p_truth"]))
        return (f"your device sends your true answer only with probability {p:.0%}; otherwise "
                f"it sends an answer it draws itself, so any single report is deniable")


class UnrelatedQuestion(ForcedResponse):
    name = "unrelated_question"
    summary = ("unrelated question: the sensitive question with probability p_truth, else an "
               "innocuous answer the device draws at a known prevalence.")
    known_as = "the unrelated-question design"

    def build_channel(self, params: dict[str, Any], labels: tuple[Any, ...]
                      ) -> list[list[Fraction]]:
        self._binary = labels == (False, True)
        self._check_keys(params, {"p_truth", "prevalence"})
        p = rational(params["p_truth"], f"{self._where}.p_truth")
        where = f"{self._where}.prevalence"
        if self._binary and not isinstance(params["prevalence"], dict):
            yes = rational(params["prevalence"], where)
            prevalence = [1 - yes, yes]
        else:
            prevalence = per_option(params["prevalence"], labels, where)
        if sum(prevalence) != 1:
            raise SurveyError(where, f"must sum to exactly 1, sums to {sum(prevalence)}")
        if p >= 1:
            raise SurveyError(f"{self._where}.p_truth", "must be below 1: with p_truth = 1 "
                              "every report is the true answer")
        self._params = {"p_truth": str(p), "prevalence":
                        str(prevalence[1]) if self._binary else
                        fraction_table(prevalence, labels)}
        return self._channel_of(p, [(1 - p) * pi for pi in prevalence])


DESIGNS: dict[str, type[ChannelDesign]] = {
    cls.name: cls for cls in (Warner, Crosswise, ForcedResponse, UnrelatedQuestion, Matrix)
}
