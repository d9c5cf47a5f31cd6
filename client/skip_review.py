"""The review's words for skip logic: the chances of a question with a "not asked" value, and
the paragraph on the questions that do not apply (the twin of client/web/js/skip_review.js,
character for character).

A question that does not apply is not listed as if it were answered. When it depends on
randomized answers the device still sends a randomized "not asked" for it, and the review says
so and why: sending nothing would tell whoever receives the reports which way those answers
went.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ldpsurvey.shared.mechanisms.set_choice import SET_MECHANISMS
from ldpsurvey.shared.question_types.base import extra_values
from ldpsurvey.shared.skip_logic import NOT_ASKED, asked_values
from ldpsurvey.shared.wording import epsilon_text, pct, to_precision

from .page_words import ENGLISH

NOT_ASKED_WORDS = "‘not asked’"
OUTSIDE = (" (outside {low} to {high}: that is the random noise, as expected; it is what keeps "
           "your real number private, and the survey's results allow for it)")


def value_words(q: Any, value: Any) -> str:
    """One value of a question with a "not asked" value, as the review names it (its unit
    names the answers)."""
    if value == NOT_ASKED:
        return NOT_ASKED_WORDS
    return q.unit.value_words(q, value, ENGLISH)


def not_asked_chances(q: Any, mechanism: Any, answer: Any) -> str | None:
    """The exact chances of what the device sends for a question with a "not asked" value (the
    answer may be NOT_ASKED); None: the mechanism's general description says it."""
    name = mechanism.name
    if name in SET_MECHANISMS:  # a check-all-that-apply answer
        return _set_chances(mechanism, answer)
    if name == "grr":
        k = len(mechanism.labels)
        truth = ("(the question does not apply to you)" if answer == NOT_ASKED
                 else "(your real answer)")
        others = "values" if answer == NOT_ASKED else f"values ({NOT_ASKED_WORDS} among them)"
        return (f"Your device will send {value_words(q, answer)} {truth} with probability "
                f"{pct(mechanism.p_star)}, otherwise one of the other {k - 1} {others}, each "
                f"with probability {pct(mechanism.q_star)}.")
    if name == "asked_geometric":
        if answer == NOT_ASKED:
            return (f"Your device will send {NOT_ASKED_WORDS} with probability "
                    f"{pct(mechanism.p_star)} (‘asked’ with probability {pct(mechanism.q_star)}), "
                    f"and the number {mechanism.default} (the middle of {q.min} to {q.max}, "
                    f"standing in for an answer) with random noise added, as for any answer.")
        return (f"Your device will send ‘asked’ with probability {pct(mechanism.p_star)} "
                f"({NOT_ASKED_WORDS} with probability {pct(mechanism.q_star)}), and your number "
                f"with random noise added: {number_noise(q, mechanism, answer)}")
    return None


def _set_chances(mechanism: Any, answer: Any) -> str | None:
    """A multiselect question with "not asked" (the pseudo-option after its k options)."""
    from .multiselect_words import _items, count

    k = mechanism.k - 1
    not_asked = answer == NOT_ASKED
    checked = 0 if not_asked else mechanism.encode(answer).bit_count()
    p, q = mechanism.p_star, mechanism.q_star
    if mechanism.name in ("option_rr", "set_ue"):
        yours = (f"{NOT_ASKED_WORDS} (the question does not apply to you)" if not_asked else
                 "the option you checked" if checked == 1 else
                 f"each of the {checked} options you checked" if checked else "")
        others = k + 1 - (1 if not_asked else checked)
        parts = [f"‘yes’ with probability {pct(p)} for {yours}"] if yours else []
        rest = ("the other mark" if others == 1 else f"each of the {others} others") if yours \
            else f"each of the {others} marks"
        parts.append(f"‘yes’ with probability {pct(q)} for {rest}")
        return (f"Your device will send a yes/no mark for each of the {k} options and for "
                f"{NOT_ASKED_WORDS}, each drawn on its own: {', and '.join(parts)}.")
    if mechanism.name == "psfo_grr":
        blanks = count(mechanism.size - mechanism.k, "blank")
        pad = mechanism.pad
        items = (NOT_ASKED_WORDS + (f" and {count(pad - 1, 'blank')}" if pad > 1 else "")
                 if not_asked else _items(checked, pad))
        return (f"Your device will send one item out of the {k} options, {NOT_ASKED_WORDS} and "
                f"{blanks}: {items} with probability {pct(p)} each, any other item with "
                f"probability {pct(q)} each. The server cannot tell whether the item sent is "
                "one of yours.")
    return None


def number_noise(q: Any, mechanism: Any, x: int) -> str:
    """The noise on a number in words (client/review.py `_number_chances`, its second part)."""
    rate = float(mechanism.rate)
    same = math.tanh(rate / 2)
    step = math.exp(rate)
    near = 2 * same / step
    further = max(0.0, 1 - same - near)
    factor = "very slightly" if step < 1.0001 else f"{to_precision(step, 3)} times"
    return (f"{x} itself with probability {pct(same)}, {x - 1} or {x + 1} with probability "
            f"{pct(near)}, a number further away with probability {pct(further)} (each further "
            f"step is {factor} less likely than the one before). The number sent can be below "
            f"{q.min} or above {q.max}: that is the noise, as expected.")


def status_words(q: Any, code: int) -> str:
    """An integer's status code with special values in words (asked_geometric.js
    statusWords): 1 an answer, 0 the first extra value, 2, 3, ... the next ones."""
    if code == 1:
        return "‘an answer’"
    value = extra_values(q)[0 if code == 0 else code - 1]
    return NOT_ASKED_WORDS if value == NOT_ASKED else f"“{value}”"


def not_asked_report_words(q: Any, mechanism: Any, report: Any) -> str | None:
    """A stored report of a question with a "not asked" value in plain words (None: the
    general wording fits)."""
    if mechanism.name == "asked_geometric" and q.special:  # a status code, not an asked bit
        return f"the status {status_words(q, report[0])} and the number {report[1]}"
    if mechanism.name == "asked_geometric":
        said = "‘asked’" if report[0] == 1 else NOT_ASKED_WORDS
        return f"{said} and the number {report[1]}" + (
            "" if q.min <= report[1] <= q.max else OUTSIDE.format(low=q.min, high=q.max))
    name = mechanism.name.removesuffix("+instantaneous")  # a layered report is one index too
    if name in SET_MECHANISMS:
        return _set_report_words(mechanism, report)
    if name == "hr":
        return f"the number {report}"
    if name in ("grr", "ordinal_exp") and isinstance(report, int):
        value = mechanism.labels[report]
        if value == NOT_ASKED:
            return "not asked"
        if value in extra_values(q):  # a special value: its label, whatever the type
            return f"the option “{value}”"
        return q.unit.value_words(q, value, ENGLISH, as_report=True)
    return None


def _set_report_words(mechanism: Any, report: Any) -> str | None:
    """A multiselect report with the "not asked" pseudo-option (its last mark or value)."""
    labels = list(mechanism.labels)

    def said(value: Any) -> str:
        return NOT_ASKED_WORDS if value == NOT_ASKED else f"“{value}”"

    if mechanism.name in ("option_rr", "set_ue") and isinstance(report, list):
        marked = [said(labels[v]) for v in range(len(labels))
                  if (report[v >> 5] >> (v & 31)) & 1]
        return ("the marks set: " + ", ".join(marked)) if marked else "no mark set"
    if mechanism.name == "psfo_grr" and isinstance(report, int):
        if report < len(labels):
            return NOT_ASKED_WORDS if labels[report] == NOT_ASKED else \
                f"the option {said(labels[report])}"
        return "a blank"
    return None


def skipped_questions(questions: Sequence[Any], values: Mapping[str, Any]
                      ) -> tuple[list[Any], list[Any]]:
    """The questions that do not apply: (hidden ones, sent as "not asked"; public ones, whose
    condition is false and that send nothing). `values` are what the device randomizes:
    NOT_ASKED for a question sent as "not asked"."""
    hidden = [q for q in questions if values.get(q.id) == NOT_ASKED]
    public = [q for q in questions if q.id not in values and not q.not_asked
              and getattr(q, "condition", None) is not None
              and not q.condition.evaluate(asked_values(values))]
    return hidden, public


def skipped_lines(questions: Sequence[Any], values: Mapping[str, Any]) -> list[str]:
    """What the review says of the questions that do not apply (none: no lines)."""
    hidden, public = skipped_questions(questions, values)
    lines = []
    if hidden:
        total = math.fsum(q.epsilon for q in hidden)
        lines.append(f"Not asked, because they do not apply to your answers: "
                     f"{_texts(hidden)}. Your device still sends a randomized "
                     f"{NOT_ASKED_WORDS} for each, drawn like any answer "
                     f"(ε = {epsilon_text(total)} in total, counted above): whether they apply "
                     "depends on answers that are randomized, and sending nothing for them "
                     "would reveal those answers.")
    if public:
        lines.append(f"Not asked, because they do not apply to your answers: {_texts(public)}. "
                     "Nothing is sent for them: whether they apply depends only on answers "
                     "sent as you give them, which the server sees anyway.")
    return lines


def two_server_skipped_lines(questions: Sequence[Any], values: Mapping[str, Any]) -> list[str]:
    """The two-server review's words on the questions that do not apply (every condition of a
    two-server survey reads answers the organizations must not learn)."""
    hidden = [q for q in questions if values.get(q.id) == NOT_ASKED]
    if not hidden:
        return []
    return [f"Not asked, because they do not apply to your answers: {_texts(hidden)}. Your "
            f"device still sends {NOT_ASKED_WORDS} for each, split into two halves like any "
            "answer: whether they apply depends on your other answers, and sending nothing "
            "for them would tell the organizations those answers."]


def not_applying(q: Any, values: Mapping[str, Any]) -> bool:
    """Whether the review leaves a question out of its list: it does not apply."""
    if values.get(q.id) == NOT_ASKED:
        return True
    condition = getattr(q, "condition", None)
    return q.id not in values and condition is not None and not condition.evaluate(
        asked_values(values))


def _texts(questions: Sequence[Any]) -> str:
    return "; ".join(f"“{q.text}”" for q in questions)
