"""A select row's choice list as ldpsurvey options: each option is its choice's label in the
base language (its name without one, said in the notes), kept in the list's order, with its
translations; the XLSForm choice names are kept in a TOML comment.

An ldpsurvey option is its text: the text is the answer value the device randomizes and what
conditions compare, so two options of one question cannot read alike. XLSForm tells choices
apart by their names, and a list may give two of them one label (the MSNA's admin1 list has a
'North' in Haiti and one in Lebanon): the later one's text, in every language, is its label
followed by its choice name in brackets ('North (LB5)'), said in the notes and the TOML."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ldpsurvey.shared.survey import MAX_LABEL

from .errors import UNSUPPORTED, Refusal
from .languages import Languages
from .refusals import REFUSED_TYPES, TOPICS


@dataclass(frozen=True)
class Options:
    """{choice name: option label}, {tag: {option label: shown text}}, TOML comments."""

    labels: dict[str, str] = field(default_factory=dict)
    translated: dict[str, dict[str, str]] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)


def options(el: Mapping[str, Any], xls_type: str, languages: Languages, notes: list[str]
            ) -> Options:
    """The options of pyxform's select element (two choices that read alike told apart by
    the later one's name); Refusal for or_other, an external list or a label too long."""
    if "or_other" in xls_type.split():
        raise Refusal(UNSUPPORTED, "'or_other' adds a free-text 'specify' answer",
                      "drop or_other (an 'other' choice without text is fine)", "free text")
    choices = el.get("choices")
    if not choices:
        reason, alternative = REFUSED_TYPES["external"]
        raise Refusal(UNSUPPORTED, reason, alternative, TOPICS["external"])
    labels: dict[str, str] = {}
    translated: dict[str, dict[str, str]] = {}
    unlabelled: list[str] = []
    apart: list[str] = []  # choices shown with their name: an earlier one has their label
    for choice in choices:
        name = str(choice.get("name"))
        label, others = languages.text(choice.get("label"))
        if label is None:
            label = name
            unlabelled.append(name)
        if label in labels.values():  # told apart by the choice name, in every language
            earlier = next(n for n, text in labels.items() if text == label)
            label, others = f"{label} ({name})", {tag: f"{shown} ({name})"
                                                  for tag, shown in others.items()}
            apart.append(f"{name!r} as {label!r} ({earlier!r} has its label)")
        _check_label(name, label, labels)
        labels[name] = label
        for tag, shown in others.items():
            translated.setdefault(tag, {})[label] = shown
    if apart:
        notes.append(f"list {el.get('list_name')!r} ({el.get('name')}): {len(apart)} "
                     "choice(s) have the label of an earlier one and are shown with their "
                     f"name (an ldpsurvey option is its text): {', '.join(apart)}")
    notes += _notes(el, unlabelled, languages.base)
    return Options(labels, translated, _comments(labels))


def _check_label(name: str, label: str, labels: Mapping[str, str]) -> None:
    # Right in XLSForm, not as an ldpsurvey option (its text is the answer): the row is left
    # out, saying what would import it.
    if len(label) > MAX_LABEL:
        raise Refusal(UNSUPPORTED, f"the choice {name!r}'s label is longer than "
                      f"{MAX_LABEL} characters (an option is its text)", "shorten it",
                      "options that cannot be option texts")
    if label in labels.values():  # 'North (b)' written as a label of its own, then 'North'
        raise Refusal(UNSUPPORTED, f"the choice {name!r} reads {label!r}, as another choice "
                      "of its list does, even told apart by its name (ldpsurvey's options "
                      "are their text)", "give each choice its own label",
                      "options that cannot be option texts")


def _comments(labels: Mapping[str, str]) -> list[str]:
    """The XLSForm choice names, when any differs from its label."""
    if all(name == label for name, label in labels.items()):
        return []
    return ["XLSForm choice names: " + ", ".join(f"{name} = {label!r}"
                                                 for name, label in labels.items())]


def _notes(el: Mapping[str, Any], unlabelled: list[str], base: str) -> list[str]:
    notes = []
    if unlabelled:
        notes.append(f"list {el.get('list_name')!r}: choices without a label in "
                     f"{base} are shown by their name: {', '.join(unlabelled)}")
    if (el.get("parameters") or {}).get("randomize"):
        notes.append(f"{el.get('name')}: parameters randomize is not kept (options are "
                     "shown in the form's order)")
    return notes
