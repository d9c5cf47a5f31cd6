"""A check-all-that-apply answer's randomization and its report in plain words: the page's
sentences (client/web/js/multiselect.js), character for character, for the set mechanisms
(option_rr, set_ue, psfo_grr, psfo_olh); client/review.py dispatches here by mechanism. The
answer itself is named by the multiselect unit (shared/question_types/multiselect.py)."""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.wording import pct


def count(n: int, noun: str) -> str:
    """'1 option', '3 options'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _marks(k: int, checked: int, p: Any, q: Any) -> str:
    parts = []
    if checked:
        mine = "the option you checked" if checked == 1 else \
            f"each of the {checked} options you checked"
        parts.append(f"‘yes’ with probability {pct(p)} for {mine}")
    if k - checked:
        rest = "the option you did not check" if k - checked == 1 else \
            f"each of the {k - checked} options you did not check"
        parts.append(f"‘yes’ with probability {pct(q)} for {rest}")
    return (f"Your device will send a yes/no mark for each of the {k} options, each drawn on "
            f"its own: {', and '.join(parts)}.")


def _items(checked: int, pad: int) -> str:
    """What the answer becomes once filled up with blanks: '2 options you checked and 1
    blank'."""
    mine = [count(checked, "option") + " you checked"] if checked else []
    if pad - checked:
        mine.append(count(pad - checked, "blank"))
    return " and ".join(mine)


def chances(q: Any, mechanism: Any, answer: Any) -> str:
    """What the device will send for this answer, with the exact chances."""
    name = mechanism.name
    checked = mechanism.encode(answer).bit_count()
    k = mechanism.k
    if name in ("option_rr", "set_ue"):
        return _marks(k, checked, mechanism.p_star, mechanism.q_star)
    blanks = count(mechanism.size - k, "blank")
    if name == "psfo_grr":
        return (f"Your device will send one item out of the {k} options and {blanks}: "
                f"{_items(checked, mechanism.pad)} with probability {pct(mechanism.p_star)} "
                f"each, any other item with probability {pct(mechanism.q_star)} each. The "
                f"server cannot tell whether the item sent is one of yours.")
    if name == "psfo_olh":
        return (f"Your device will take one item at random out of your answer filled up to "
                f"{count(mechanism.pad, 'item')} ({_items(checked, mechanism.pad)}), pick a "
                f"random code that sorts the {k} options and {blanks} into {mechanism.g} "
                f"buckets, and send the code with that item’s bucket with probability "
                f"{pct(mechanism.p_bucket)}, otherwise with one of the other {mechanism.g - 1} "
                f"buckets picked at random. Many items share each bucket.")
    return mechanism.deniability()


def describe(q: Any, mechanism: Any) -> str:
    """How the mechanism randomizes, whatever the answer (the page's describe().text)."""
    name = mechanism.name
    k = mechanism.k
    if name in ("option_rr", "set_ue"):
        return (f"Your device sets one yes/no mark for each of the {k} options, each drawn on "
                f"its own: ‘yes’ with probability {pct(mechanism.p_star)} for an option you "
                f"checked, {pct(mechanism.q_star)} for one you did not.")
    blanks = count(mechanism.size - k, "blank")
    if name == "psfo_grr":
        return (f"Your device fills your answer up to {count(mechanism.pad, 'item')} with "
                f"blanks and sends one item out of the {k} options and {blanks}: each of "
                f"yours with probability {pct(mechanism.p_star)}, each other one with "
                f"probability {pct(mechanism.q_star)}.")
    if name == "psfo_olh":
        return (f"Your device fills your answer up to {count(mechanism.pad, 'item')} with "
                f"blanks, takes one at random, and sends a random code that sorts the {k} "
                f"options and {blanks} into {mechanism.g} buckets with that item’s bucket with "
                f"probability {pct(mechanism.p_bucket)}, otherwise with one of the other "
                f"{mechanism.g - 1} buckets picked at random.")
    return mechanism.deniability()


def report_words(q: Any, mechanism: Any, report: Any) -> str:
    """A stored report in plain words (what the server receives)."""
    name = mechanism.name
    if name in ("option_rr", "set_ue") and isinstance(report, list):
        marked = [q.options[v] for v in range(len(q.options))
                  if (report[v >> 5] >> (v & 31)) & 1]
        return ("the options marked: " + ", ".join(f"“{o}”" for o in marked)) if marked \
            else "no option marked"
    if name == "psfo_grr" and isinstance(report, int):
        return f"the option “{q.options[report]}”" if report < len(q.options) else "a blank"
    if name == "psfo_olh" and isinstance(report, list):
        return f"the random code {report[0]} and bucket {report[1]}"
    return repr(report)
