"""Surveys in several languages (contract 4): the translated text inside the signed survey,
checked when the survey is parsed, and the one accessor every reader of it uses.

    language = "en"                       # BCP 47 tag of the survey's own text; default "en"
    [translations.es]
    title = "..."
    description = "..."
    [translations.es.questions.rx_misuse]
    text = "..."
    hint = "..."
    options = { "never" = "nunca", "daily" = "a diario" }   # option label -> shown text
    groups = { "at least monthly" = "al menos una vez al mes" }   # group name -> shown text
    [translations.es.questions.home]
    regions = { "town" = "pueblo" }       # a location question's region name -> shown text

Every key of a translation is optional: a string it does not give falls back to the survey's
own text, string by string (`SurveyText`, which says where it did). Answers, conditions and
reports keep the base option labels as values; translations are display text only. The keys
`language`, `translations` and a question's `hint` enter the canonical bytes only when present,
so a survey without them keeps the bytes (and the signature) it had before; likewise a
translation's `groups` and `regions` enter them only when given.

Refused when the survey is parsed, naming the field: a tag that is not a well-formed BCP 47
tag in canonical case (`es-MX`, not `es_mx`), a translation into the base language itself, an
unknown question id, an option that is not one of the question's labels (or a question with no
option labels to translate: yes/no, integer and location questions), a group that is not one
of the question's groups (or groups of a question that has none: only categorical and ordinal
questions declare them), a region that is not one of a location question's regions, an empty
translation, unknown keys, and text that is empty or too long.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import SurveyError
from .question_types.base import special_labels
from .question_types.fields import MAX_LABEL, MAX_TEXT, check_utf8, text

DEFAULT_LANGUAGE = "en"
MAX_LANGUAGES = 64
_TRANSLATION_KEYS = {"title", "description", "questions"}
_QUESTION_KEYS = {"text", "hint", "options", "groups", "regions"}
# RFC 5646 `langtag` (well-formed; grandfathered and private-use-only tags are not accepted,
# nor the 4-8 letter primary subtags the registry reserves but assigns to no language, so that
# a language's name, "english", is not mistaken for a tag):
# language[-extlang]{0,3} [-script] [-region] (-variant)* (-extension)* [-privateuse].
_LANGTAG = re.compile(
    r"^(?P<language>[A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3})"
    r"(?:-(?P<script>[A-Za-z]{4}))?"
    r"(?:-(?P<region>[A-Za-z]{2}|[0-9]{3}))?"
    r"(?P<rest>(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*"
    r"(?:-[0-9A-WYZa-wyz](?:-[A-Za-z0-9]{2,8})+)*"
    r"(?:-[Xx](?:-[A-Za-z0-9]{1,8})+)?)$")


# --- language tags -------------------------------------------------------------------------


def canonical_tag(tag: str) -> str | None:
    """The tag in BCP 47's canonical case (language lower, Script title, REGION upper, the
    rest lower), or None if it is not a well-formed tag. Accepts `_` for `-` (POSIX locales)."""
    if not isinstance(tag, str):
        return None
    m = _LANGTAG.fullmatch(tag.strip().replace("_", "-"))
    if m is None:
        return None
    parts = [m["language"].lower()]
    if m["script"]:
        parts.append(m["script"].title())
    if m["region"]:
        parts.append(m["region"].upper())
    return "-".join(parts) + m["rest"].lower()


def requested_tag(value: str) -> str:
    """A language tag a person typed (`--lang`): well-formed BCP 47, any case, its subtags
    joined by '-'. A POSIX locale's '_' (es_ES) is refused, not read as es-ES: docs say a tag
    that is not BCP 47 is a usage error, and every command asks the same of it. SurveyError
    (naming --lang) otherwise; returns the tag as given."""
    if not isinstance(value, str) or canonical_tag(value) is None or "_" in value:
        hint = (f" (BCP 47 joins subtags with '-': write {canonical_tag(value)!r})"
                if isinstance(value, str) and canonical_tag(value) else " (e.g. es, pt-BR)")
        raise SurveyError("--lang", f"{value!r} is not a BCP 47 language tag{hint}")
    return value


def check_tag(tag: Any, where: str) -> str:
    """A language tag as a survey writes it: well-formed and in canonical case."""
    canonical = canonical_tag(tag) if isinstance(tag, str) else None
    if canonical is None:
        raise SurveyError(where, f"{tag!r} is not a BCP 47 language tag (e.g. \"en\", "
                          "\"es\", \"pt-BR\", \"zh-Hant\")")
    if canonical != tag:
        raise SurveyError(where, f"write the language tag {tag!r} as {canonical!r}")
    return tag


def best_language(available: Sequence[str], preferences: Iterable[str]) -> str | None:
    """The available tag that best matches the first preference that matches any, by BCP 47
    prefix: an exact match (case-insensitive); else the longest available tag that is a prefix
    of the preference (es-MX -> es); else the first available tag the preference is a prefix of
    (es -> es-419). None when no preference matches (the caller uses the base language)."""
    by_lower = {tag.lower(): tag for tag in available}
    for raw in preferences:
        wanted = canonical_tag(raw) if isinstance(raw, str) else None
        if wanted is None:
            continue
        want = wanted.lower()
        if want in by_lower:
            return by_lower[want]
        parts = want.split("-")
        for n in range(len(parts) - 1, 0, -1):
            if "-".join(parts[:n]) in by_lower:
                return by_lower["-".join(parts[:n])]
        for tag in available:
            if tag.lower().startswith(want + "-"):
                return tag
    return None


def environment_languages(environ: Mapping[str, str] | None = None) -> list[str]:
    """The languages the environment asks for, most wanted first, with gettext's precedence:
    the locale is the first set of LC_ALL, LC_MESSAGES, LANG; if it is C or POSIX (or unset)
    nothing is asked for; otherwise LANGUAGE (a colon-separated list) comes first, then the
    locale. POSIX spellings (es_ES.UTF-8@euro) become tags (es-ES)."""
    env = os.environ if environ is None else environ
    locale = next((env[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(k)), "")
    base = _posix_tag(locale)
    if base is None:
        return []
    wanted = [t for t in (_posix_tag(x) for x in env.get("LANGUAGE", "").split(":")) if t]
    return [*wanted, base]


def _posix_tag(locale: str) -> str | None:
    name = locale.split(".", 1)[0].split("@", 1)[0].strip()
    if not name or name in ("C", "POSIX"):
        return None
    return canonical_tag(name)


# --- the parsed translations ---------------------------------------------------------------


@dataclass(frozen=True)
class QuestionTranslation:
    """One question's text in one language; None (or no entry) means "not translated"."""

    text: str | None = None
    hint: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    # a categorical/ordinal question's group names and a location question's region names ->
    # shown text; each absent from the canonical bytes when empty (older bytes unchanged)
    groups: Mapping[str, str] = field(default_factory=dict)
    regions: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.text is not None:
            d["text"] = self.text
        if self.hint is not None:
            d["hint"] = self.hint
        if self.options:
            d["options"] = dict(self.options)
        if self.groups:
            d["groups"] = dict(self.groups)
        if self.regions:
            d["regions"] = dict(self.regions)
        return d


@dataclass(frozen=True)
class Translation:
    """A survey's text in one language (contract 4)."""

    title: str | None = None
    description: str | None = None
    questions: Mapping[str, QuestionTranslation] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.title is not None:
            d["title"] = self.title
        if self.description is not None:
            d["description"] = self.description
        if self.questions:
            d["questions"] = {qid: q.to_dict() for qid, q in self.questions.items()}
        return d


def parse_language(data: Mapping[str, Any]) -> str | None:
    """The survey's `language` (None when absent: the base text is then "en")."""
    if data.get("language") is None:
        return None
    return check_tag(data["language"], "language")


def parse_hint(data: Mapping[str, Any], where: str) -> str | None:
    """A question's `hint` in the base language (None when absent)."""
    return text(data, "hint", f"{where}.hint", required=False)


def parse_translations(value: Any, base: str, questions: Sequence[Any]
                       ) -> dict[str, Translation]:
    """The `translations` table, checked against the parsed questions (by id and option)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not value:
        raise SurveyError("translations", "must be a table of language tag = table, e.g. "
                          "[translations.es]")
    if len(value) > MAX_LANGUAGES:
        raise SurveyError("translations", f"at most {MAX_LANGUAGES} languages")
    by_id = {q.id: q for q in questions}
    parsed: dict[str, Translation] = {}
    for tag, table in value.items():
        at = f"translations.{tag}"
        check_tag(tag, at)
        if tag == base:
            raise SurveyError(at, f"{tag!r} is the survey's own language (language = "
                              f"{base!r}): its text is the survey's title, text and options")
        if not isinstance(table, Mapping) or not table:
            raise SurveyError(at, "must be a table with title, description and/or questions")
        _reject(table, _TRANSLATION_KEYS, at)
        raw_questions = table.get("questions", {})
        if not isinstance(raw_questions, Mapping):
            raise SurveyError(f"{at}.questions", "must be a table of question id = table")
        translated: dict[str, QuestionTranslation] = {}
        for qid, entry in raw_questions.items():
            translated[qid] = _question(entry, by_id.get(qid), f"{at}.questions.{qid}")
        parsed[tag] = Translation(title=_string(table, "title", at),
                                  description=_string(table, "description", at, empty_ok=True),
                                  questions=translated)
    return parsed


def _question(entry: Any, question: Any, at: str) -> QuestionTranslation:
    if question is None:
        raise SurveyError(at, "is not a question of this survey")
    if not isinstance(entry, Mapping) or not entry:
        raise SurveyError(at, "must be a table with text, hint, options, groups and/or regions")
    _reject(entry, _QUESTION_KEYS, at)
    kind = f"{'an' if question.type[0] in 'aeiou' else 'a'} {question.type} question"
    grouped = question.unit.named_sets_key == "groups"
    located = question.unit.named_sets_key == "regions"
    return QuestionTranslation(
        text=_string(entry, "text", at), hint=_string(entry, "hint", at),
        options=_names(entry.get("options"), option_labels(question), "option label", at,
                       "options", f"{kind} has no option labels to translate"),
        groups=_names(entry.get("groups"), group_names(question), "group", at, "groups",
                      f"{kind} {'without groups ' if grouped else ''}has no groups to "
                      "translate" + ("" if grouped else " (only categorical and ordinal "
                                     "questions declare groups)")),
        regions=_names(entry.get("regions"), region_names(question), "region", at, "regions",
                       f"{kind} {'without regions ' if located else ''}has no regions to "
                       "translate" + ("" if located else " (only location questions have "
                                      "regions)")))


def _names(raw: Any, names: Sequence[str], noun: str, at: str, key: str, none: str
           ) -> dict[str, str]:
    """A table of the question's own names (option labels, group or region names) -> shown
    text; a name that is not one of `names` is refused naming it and the names it could be."""
    if raw is None:
        return {}
    where = f"{at}.{key}"
    if not names:
        raise SurveyError(where, none)
    if not isinstance(raw, Mapping) or not raw:
        raise SurveyError(where, f"must be a table of {noun} = shown text")
    out: dict[str, str] = {}
    for name, shown in raw.items():
        if name not in names:
            article = "an" if noun[0] in "aeiou" else "a"
            plural = "options" if key == "options" else key
            raise SurveyError(where, f"{name!r} is not {article} {noun.split()[0]} of this "
                              f"question (its {plural}: {', '.join(map(repr, names))})")
        out[name] = _checked(shown, f"{where}.{name}", MAX_LABEL)
    return out


def option_labels(question: Any) -> tuple[str, ...]:
    """The option labels a translation may give text for (none for yes/no, integer and
    location questions: their values are not the designer's words; the unit's
    `translatable_options`)."""
    return (*question.unit.translatable_options(question), *special_labels(question))


def group_names(question: Any) -> tuple[str, ...]:
    """The group names a translation may give text for (a categorical/ordinal question's
    `groups`; a location question's regions are `region_names`)."""
    return _named_sets(question, "groups")


def region_names(question: Any) -> tuple[str, ...]:
    """A location question's region names (its `groups` in the parsed question)."""
    return _named_sets(question, "regions")


def _named_sets(question: Any, key: str) -> tuple[str, ...]:
    """The names of the question's named sets of options if its type writes them under
    `key` ("groups" or "regions": the unit's `named_sets_key`), else none."""
    return tuple(question.groups) if question.unit.named_sets_key == key else ()


def _string(table: Mapping[str, Any], key: str, at: str, empty_ok: bool = False) -> str | None:
    if table.get(key) is None:
        return None
    return _checked(table[key], f"{at}.{key}", MAX_TEXT, empty_ok)


def _checked(value: Any, where: str, limit: int, empty_ok: bool = False) -> str:
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise SurveyError(where, "must be a non-empty string")
    if len(value) > limit:
        raise SurveyError(where, f"at most {limit} characters")
    check_utf8(value, where)
    return value


def _reject(table: Mapping[str, Any], allowed: set[str], at: str) -> None:
    unknown = sorted(str(k) for k in table if k not in allowed)
    if unknown:
        raise SurveyError(f"{at}.{unknown[0]}", f"unknown key (expected "
                          f"{', '.join(sorted(allowed))})")


# --- reading the text in one language --------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A string to show: its text, the language it is in, and whether it fell back (the
    chosen language has no text for it, so the base language's is shown)."""

    text: str
    language: str
    fell_back: bool = False


class SurveyText:
    """A survey's display text in one language, falling back per string to the base language.

    Built from a `Survey` or its canonical dict (`Survey.to_dict()`, what reports hold):

        text = SurveyText(survey, "es")           # or SurveyText.choose(survey, ["es-MX"])
        text.title().text, text.question("q1").text, text.option("q1", "never").text
        text.group("q1", "ever").text, text.region("home", "town").text

    The rule, per string: the chosen language's text if the translation gives it, else the
    base language's (`Shown.fell_back`), unless that text has no letters ("18-24", "10+"):
    it reads the same in every language and is not missing (same_in_every_language). A hint
    shown in the chosen language only (no base hint) is shown without falling back; a
    question with no hint in either has none.
    `fallbacks()` lists every string of the survey that falls back, as `title`,
    `description`, `questions.<id>.text|hint`, `questions.<id>.options.<label>`,
    `questions.<id>.groups.<name>` or `questions.<id>.regions.<name>`."""

    def __init__(self, survey: Any, language: str | None = None) -> None:
        d = survey.to_dict() if hasattr(survey, "to_dict") else survey
        self.base: str = d.get("language") or DEFAULT_LANGUAGE
        self._translations: Mapping[str, Any] = d.get("translations") or {}
        self.language = self.base if language in (None, self.base) else language
        if self.language != self.base and self.language not in self._translations:
            raise KeyError(self.language)
        self._survey = d
        self._questions = {q["id"]: q for q in d.get("questions", [])}
        self._t: Mapping[str, Any] = self._translations.get(self.language, {})

    @classmethod
    def choose(cls, survey: Any, preferences: Iterable[str]) -> SurveyText:
        """The best language of the survey for these preferences (base when none matches)."""
        d = survey.to_dict() if hasattr(survey, "to_dict") else survey
        return cls(d, best_language(languages(d), preferences))

    @property
    def translated(self) -> bool:
        """Whether the chosen language is a translation (not the survey's own text)."""
        return self.language != self.base

    def title(self) -> Shown:
        return self._pick(self._t.get("title"), str(self._survey.get("title", "")))

    def description(self) -> Shown:
        return self._pick(self._t.get("description"), str(self._survey.get("description", "")))

    def question(self, qid: str) -> Shown:
        """A question's text (KeyError for an unknown id)."""
        return self._pick(self._qt(qid).get("text"), str(self._questions[qid]["text"]))

    def hint(self, qid: str) -> Shown | None:
        """A question's hint, or None when it has none in either language."""
        base = self._questions[qid].get("hint")
        mine = self._qt(qid).get("hint")
        if mine is None and base is None:
            return None
        if base is None:
            return Shown(mine, self.language)
        return self._pick(mine, base)

    def option(self, qid: str, label: str) -> Shown:
        """How an option is shown (the label itself in the base language); KeyError for a
        label that is not one of the question's options (or special values' labels)."""
        q = self._questions[qid]
        if label not in (q.get("options") or ()) and label not in (q.get("special") or {}
                                                                    ).values():
            raise KeyError(label)
        return self._pick((self._qt(qid).get("options") or {}).get(label), label)

    def group(self, qid: str, name: str) -> Shown:
        """How a categorical/ordinal question's group is named (the name itself in the base
        language); KeyError for a name that is not one of the question's groups."""
        q = self._questions[qid]
        if name not in (q.get("groups") or {}):  # canonical: only a type with groups has them
            raise KeyError(name)
        return self._pick((self._qt(qid).get("groups") or {}).get(name), name)

    def region(self, qid: str, name: str) -> Shown:
        """How a location question's region is named (the name itself in the base language);
        KeyError for a name that is not one of the question's regions."""
        if name not in (self._questions[qid].get("regions") or {}):
            raise KeyError(name)
        return self._pick((self._qt(qid).get("regions") or {}).get(name), name)

    def fallbacks(self) -> list[str]:
        """Every string of the survey shown in the base language for want of a translation."""
        if not self.translated:
            return []
        out = [name for name, shown in (("title", self.title()),
                                        ("description", self.description()))
               if shown.fell_back and shown.text]
        for qid, q in self._questions.items():
            if self.question(qid).fell_back:
                out.append(f"questions.{qid}.text")
            hint = self.hint(qid)
            if hint is not None and hint.fell_back:
                out.append(f"questions.{qid}.hint")
            # A canonical question has `options` where they are the designer's words
            # (categorical, ordinal, multiselect), `groups` where its type has them.
            out += [f"questions.{qid}.options.{label}" for label in q.get("options", [])
                    if self.option(qid, label).fell_back]
            out += [f"questions.{qid}.groups.{name}" for name in q.get("groups") or {}
                    if self.group(qid, name).fell_back]
            out += [f"questions.{qid}.regions.{name}" for name in q.get("regions") or {}
                    if self.region(qid, name).fell_back]
        return out

    def _qt(self, qid: str) -> Mapping[str, Any]:
        if qid not in self._questions:
            raise KeyError(qid)
        return (self._t.get("questions") or {}).get(qid) or {}

    def _pick(self, mine: str | None, base: str) -> Shown:
        if not self.translated:
            return Shown(base, self.base)
        if mine is None:
            return Shown(base, self.base, fell_back=not same_in_every_language(base))
        return Shown(mine, self.language)


def same_in_every_language(text: str) -> bool:
    r"""Whether a string reads the same in every language: it has no letter (Unicode category
    L), only digits, punctuation, symbols and spaces ("18-24", "10+", "50 %", "3/4"). Such a
    string untranslated is not missing, so it is shown without a fallback mark (the page's
    sameInEveryLanguage, client/web/js/survey_text.js, is the same rule: /\p{L}/u)."""
    return not any(c.isalpha() for c in text)


def languages(survey: Any) -> list[str]:
    """The survey's languages: its base language first, then its translations in order."""
    d = survey.to_dict() if hasattr(survey, "to_dict") else survey
    return [d.get("language") or DEFAULT_LANGUAGE, *(d.get("translations") or {})]


def choose_text(survey: Any, requested: str | None,
                environ: Mapping[str, str] | None = None) -> SurveyText:
    """The text a command shows: `requested` (--lang) if given, else the environment's
    languages (environment_languages), each matched by BCP 47 prefix; the base language when
    nothing matches. SurveyError for a --lang that is not a language tag."""
    if requested is not None:
        return SurveyText.choose(survey, [requested_tag(requested)])
    return SurveyText.choose(survey, environment_languages(environ))

