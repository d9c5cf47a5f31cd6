"""The form's languages: pyxform groups label and hint cells by language name (`Español (es)`,
or `default` for the untranslated columns); ldpsurvey needs a BCP 47 tag for each and one base
language (contract 4), the rest becoming translations."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ldpsurvey.shared.translations import DEFAULT_LANGUAGE, canonical_tag

from .errors import XlsFormError, quoted

_LANGUAGE = re.compile(r"^(?P<name>.*?)\s*\((?P<tag>[^()]*)\)\s*$")
UNTRANSLATED = "default"  # pyxform's name for the untranslated columns' language


@dataclass(frozen=True)
class Languages:
    """The base language (pyxform's name of it) and every language's tag, by pyxform name."""

    base: str
    tags: dict[str, str]

    @property
    def base_tag(self) -> str:
        return self.tags[self.base]

    def text(self, value: Any) -> tuple[str | None, dict[str, str]]:
        """(base-language text, {other tag: text}) of a label or hint cell group."""
        if value is None:
            return None, {}
        if isinstance(value, str):  # one text for every language (e.g. a choices sheet
            return value, {}        # with only an untagged label column): ODK shows it as is
        base = value.get(self.base)
        others = {self.tags[n]: str(t) for n, t in value.items()
                  if n != self.base and n in self.tags and str(t).strip()}
        return (str(base) if base is not None and str(base).strip() else None), others


def language_tag(name: str) -> str | None:
    """The BCP 47 tag of a language name ('Español (es)', or a bare tag), None without one."""
    m = _LANGUAGE.fullmatch(name.strip())
    if m is not None:
        return canonical_tag(m["tag"])
    return canonical_tag(name) if "-" in name or len(name.strip()) <= 3 else None


def languages(form: Mapping[str, Any], settings: Mapping[str, Any], filename: str,
              notes: list[str]) -> Languages:
    """The languages of pyxform's form and settings; XlsFormError for a language without a
    tag, a default_language that is none of them, or two languages with one tag."""
    names = _names(form)
    tags = _tags(names, filename)
    setting = settings.get("default_language")
    setting = None if setting is None or not str(setting).strip() else str(setting).strip()
    setting = _named(setting, tags, notes)
    base, untranslated = _base(names, tags, setting, filename, notes)
    if untranslated is not None:
        tags[UNTRANSLATED] = untranslated
    _refuse_shared_tags(tags, filename)
    found = Languages(base, tags)
    notes += _untranslated(form, found)
    return found


def _named(setting: str | None, tags: Mapping[str, str], notes: list[str]) -> str | None:
    """The form's language settings default_language names: itself, or the one language
    whose name it is without the code ('English' for 'English (en)', as the ODK docs' own
    examples write it)."""
    if setting is None or setting in tags or _LANGUAGE.fullmatch(setting):
        return setting
    named = [n for n in tags if (m := _LANGUAGE.fullmatch(n)) is not None
             and m["name"].casefold() == setting.casefold()]
    if len(named) != 1:
        return setting
    notes.append(f"settings default_language {setting!r} is taken as the form's language "
                 f"{named[0]!r}")
    return named[0]


MAX_NAMED = 10  # texts named in a note on missing translations; the rest are counted


def _untranslated(form: Mapping[str, Any], languages: Languages) -> list[str]:
    """A note per language for the labels and hints with base text but none in it (an
    empty `label::Español (es)` cell): shown in the base language, which is said, not
    silent."""
    missing: dict[str, list[str]] = {}

    def check(value: Any, what: str) -> None:
        if not isinstance(value, Mapping):
            return
        base = value.get(languages.base)
        if base is None or not str(base).strip():
            return
        for name in languages.tags:
            if name != languages.base and not str(value.get(name) or "").strip():
                missing.setdefault(name, []).append(what)

    def walk(elements: Sequence[Mapping[str, Any]]) -> None:
        for el in elements:
            check(el.get("label"), f"{el.get('name')}'s label")
            check(el.get("hint"), f"{el.get('name')}'s hint")
            for choice in el.get("choices") or ():
                check(choice.get("label"), f"choice {choice.get('name')!r} of "
                      f"{el.get('name')}")
            walk(el.get("children") or ())

    walk(form.get("children") or ())
    notes = []
    for name, whats in missing.items():
        whats = list(dict.fromkeys(whats))
        shown = ", ".join(whats[:MAX_NAMED]) + (f" and {len(whats) - MAX_NAMED} more"
                                                if len(whats) > MAX_NAMED else "")
        notes.append(f"no text in {name} for {len(whats)} label(s) or hint(s), shown in "
                     f"{languages.base if languages.base != UNTRANSLATED else 'the base language'}"
                     f" instead: {shown}")
    return notes


def _names(form: Mapping[str, Any]) -> list[str]:
    """pyxform's language names, in the order the form first uses them."""
    names: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, Mapping):
            names.extend(k for k in value if k not in names)

    def walk(elements: Sequence[Mapping[str, Any]]) -> None:
        for el in elements:
            collect(el.get("label"))
            collect(el.get("hint"))
            for choice in el.get("choices") or ():
                collect(choice.get("label"))
            walk(el.get("children") or ())

    walk(form.get("children") or ())
    title = form.get("title")  # untranslated form_title is the base title
    if isinstance(title, Mapping):
        collect({k: v for k, v in title.items() if k != UNTRANSLATED})
    return names


def _tags(names: Sequence[str], filename: str) -> dict[str, str]:
    """{language name: tag} of the named languages (the untranslated one aside)."""
    tags: dict[str, str] = {}
    for name in names:
        if name == UNTRANSLATED:
            continue
        tag = language_tag(name)
        if tag is None:
            raise XlsFormError(f"{filename}: the language {name!r} has no BCP 47 code "
                               f"in parentheses: write the columns as "
                               f"'label::{name} (xx)', e.g. 'label::Español (es)'")
        tags[name] = tag
    return tags


def _base(names: Sequence[str], tags: Mapping[str, str], setting: str | None, filename: str,
          notes: list[str]) -> tuple[str, str | None]:
    """(the base language's name, the untranslated columns' tag when they are the base):
    settings default_language, else the untranslated columns (English), else the first
    language of the form."""
    if setting is not None and setting in tags:
        if UNTRANSLATED in names:
            raise XlsFormError(f"{filename}: untranslated label or hint columns next "
                               f"to the language columns of {setting!r}: tag them, e.g. "
                               f"'label::{setting}'")
        return setting, None
    if setting is not None:
        if tags and UNTRANSLATED not in names:
            raise XlsFormError(f"{filename}: settings default_language {quoted(setting)} "
                               f"is none of the form's languages ({', '.join(tags)})")
        tag = language_tag(setting)
        if tag is None:
            raise XlsFormError(f"{filename}: settings default_language {quoted(setting)} "
                               "has no BCP 47 code in parentheses, e.g. 'English (en)'")
        return UNTRANSLATED, tag
    if UNTRANSLATED in names or not tags:
        if tags:
            notes.append("the untranslated label/hint columns are the base text, "
                         "taken as English (en): set settings default_language, e.g. "
                         "'English (en)', to say otherwise")
        return UNTRANSLATED, DEFAULT_LANGUAGE
    base = next(iter(tags))
    notes.append(f"settings has no default_language: {base}, the first language "
                 "of the form, is the base text")
    return base, None


def _refuse_shared_tags(tags: Mapping[str, str], filename: str) -> None:
    seen: dict[str, str] = {}
    for name, tag in tags.items():
        if tag in seen:
            raise XlsFormError(f"{filename}: the languages {seen[tag]!r} and {name!r} "
                               f"both have the code {tag!r}")
        seen[tag] = name
