"""Answering a multiselect question on the terminal: the options checked, by number or name,
separated by commas ("none" for none). The answer is the list of their labels."""

from __future__ import annotations

from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.survey import Question

NONE_WORDS = {"none", "-"}


def hint(q: Question) -> str:
    shape = q.multiselect
    most = ("" if shape.largest == q.k - len(shape.exclusive)
            else f", at most {shape.largest}")
    none = ("" if shape.required_min else ', or "none"')
    alone = "".join(f"; {q.options[j]!r} only alone" for j in shape.exclusive)
    return f"numbers or options separated by commas{most}{none}{alone}"


def parse(q: Question, text: str) -> list[str]:
    """The labels of what was typed; AnswerError for a part that names no option. Whether the
    set is allowed (size, duplicates) is the mechanism's check (`SetMechanism.encode`)."""
    text = text.strip()
    if text in q.options:  # a label that itself holds a comma, or an option named "none"
        return [text]
    if text.lower() in NONE_WORDS:
        return []
    chosen = []
    for part in (p.strip() for p in text.split(",")):
        if part in q.options:
            chosen.append(part)
        elif part.isdigit() and 1 <= int(part) <= len(q.options):
            chosen.append(q.options[int(part) - 1])
        else:
            raise AnswerError(f"{part!r} is not an option: type numbers 1-{len(q.options)} or "
                              f"options exactly, separated by commas")
    return chosen
