"""The page's words spoken on the command line: one catalogue, client/web/js/messages/<lang>/.

`respond --lang es` asks and reviews in Spanish with the page's own sentences, read from the
page's message catalogue (each part `export default {JSON};`) and filled in with the same
subset of ICU MessageFormat as js/i18n.js ("{name}", "{n, plural, =0 {…} one {…} other {…}}",
"{k, select, yes {…} other {…}}", "#" the innermost plural's count). Numbers given as English
text ("12.5%", "3.14", "1,097") are written as the language writes them (12,5 %, 3,14), like
the page's N(); the plural categories are CLDR's for the catalogue's languages. There is no
second copy of the words: a sentence the catalogue lacks in a language is English's, as on the
page. English itself is spoken by client/review.py's sentences (the same words, checked
against the page by tests/web/test_page_wording.py).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ldpsurvey.shared.wording import pct

CATALOGUES = ("en", "es", "fr")  # js/i18n.js CATALOGUES
PREFIX = "export default "


@cache
def catalogue(lang: str) -> Mapping[str, str]:
    """Every message of a catalogue language (all its parts), English's where it lacks one."""
    merged: dict[str, str] = {} if lang == "en" else dict(catalogue("en"))
    folder = files("ldpsurvey.client") / "web" / "js" / "messages" / lang
    for part in sorted(folder.iterdir(), key=lambda p: p.name):
        if part.name.endswith(".js"):
            text = part.read_text(encoding="utf-8").rstrip()
            merged.update(json.loads(text[len(PREFIX):].rstrip(";")))
    return merged


@cache
def cli_catalogue(lang: str) -> Mapping[str, str]:
    """The command line's own sentences, which the page never says (client/messages/<lang>.json:
    a series' reuse, the total without a page's limit, a two-server survey's guarantees, what
    is printed once stored): the same syntax as the page's, checked to exist in en, es and fr
    with the same placeholders (tests/client/test_cli_words.py)."""
    folder = files("ldpsurvey.client") / "messages"
    return json.loads((folder / f"{lang}.json").read_text(encoding="utf-8"))


class Decimal(str):
    """A number English writes as this text ("3.14", "12.5%"): the page's N()."""


N = Decimal

_DECIMAL = re.compile(r"^-?([\d,]*)(?:\.(\d+))?(?:e([-+]?)(\d+))?(%?)$")
_GROUP = {"es": ".", "fr": "\u202f"}
_PERCENT = "\u00a0%"  # Intl.NumberFormat's percent sign in es and fr


def plural_category(lang: str, n: Any) -> str:
    """CLDR's plural category of a whole number in a catalogue language."""
    try:
        i = abs(int(n))
    except (TypeError, ValueError):
        return "other"
    if lang == "en":
        return "one" if i == 1 else "other"
    if i == 1 or (lang == "fr" and i == 0):
        return "one"
    return "many" if i and i % 1_000_000 == 0 else "other"


@dataclass(frozen=True)
class Words:
    """The page's messages in one catalogue language."""

    language: str = "en"

    @property
    def english(self) -> bool:
        return self.language == "en"

    def t(self, key: str, **params: Any) -> str:
        """The message `key` filled in (KeyError for a key no catalogue has)."""
        return self._render(parse_message(catalogue(self.language)[key]), params)

    def cli(self, key: str, **params: Any) -> str:
        """The command line's own message `key` (client/messages) filled in as `t` fills the
        page's."""
        return self._render(parse_message(cli_catalogue(self.language)[key]), params)

    def number(self, value: Any) -> str:
        """A number as the page shows it: Decimal text per the language, other numbers as
        digits."""
        if isinstance(value, Decimal):
            return self._decimal(str(value))
        if isinstance(value, bool):
            return str(value)
        return str(value) if value is not None else ""

    def _decimal(self, text: str) -> str:
        m = _DECIMAL.fullmatch(text)
        if self.english or m is None:
            return text
        whole, fraction, sign, exponent, percent = m.groups()
        digits = whole.replace(",", "")
        if "," in whole:
            groups = []
            while len(digits) > 3:
                groups.insert(0, digits[-3:])
                digits = digits[:-3]
            digits = _GROUP.get(self.language, ",").join([digits, *groups])
        out = ("-" if text.startswith("-") else "") + digits
        if fraction:
            out += "," + fraction
        if exponent is not None:  # Intl's scientific notation: 1,9E-20
            out += "E" + ("-" if sign == "-" else "") + str(int(exponent))
        return out + (_PERCENT if percent else "")

    def _render(self, nodes: list[Any], params: Mapping[str, Any]) -> str:
        out = []
        for node in nodes:
            if isinstance(node, str):
                out.append(node)
            elif node[0] == "#" or node[0] == "arg":
                out.append(self._shown(params.get(node[1])))
            else:
                _, name, kind, cases = node
                value = params.get(name)
                if kind == "plural":  # an exact case first; it may be empty ("=0 {}")
                    case = cases.get(f"={value}")
                    if case is None:
                        case = cases.get(plural_category(self.language, value))
                else:
                    case = cases.get(str(value).lower() if isinstance(value, bool)
                                     else str(value))
                out.append(self._render(case if case is not None else cases["other"], params))
        return "".join(out)

    def _shown(self, value: Any) -> str:
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return self.number(value)
        return "" if value is None else str(value)

    # --- the words a respondent types ------------------------------------------------------

    def yes_no(self, typed: str) -> bool | None:
        """A typed yes/no answer: English's y/yes/true/1 and n/no/false/0 always, and the
        language's own words (word.yes, word.no: "sí", "oui") with their first letter, in any
        case, with or without accents ("si" for "sí"); None when it is neither."""
        said = _folded(typed)
        if not said:
            return None
        yes = {"y", "yes", "true", "1"}
        no = {"n", "no", "false", "0"}
        for value, words in ((True, yes), (False, no)):
            own = _folded(self.t("word.yes" if value else "word.no"))
            words |= {own, own[:1]}
        if said in yes and said not in no:
            return True
        if said in no and said not in yes:
            return False
        return None

    def yes_no_hint(self) -> str:
        """The prompt's "yes/no" in the language ("sí/no", "oui/non")."""
        if self.english:
            return "yes/no"
        return f"{self.t('word.yes').lower()}/{self.t('word.no').lower()}"


@dataclass(frozen=True)
class Speaker:
    """What a question's unit says with on this device (shared/question_types DeviceWords):
    the page's messages in `words`' language, the options by their text in `shown` (a
    SurveyText; None: by their labels, as the English review names them)."""

    words: Words = Words()
    shown: Any = None

    @property
    def english(self) -> bool:
        return self.words.english

    def t(self, key: str, **params: Any) -> str:
        return self.words.t(key, **params)

    def option(self, question: Any, label: Any) -> str:
        return self.shown.option(question.id, label).text if self.shown is not None else label

    def percent(self, p: float) -> Any:
        return N(pct(p))

    def number(self, text: str) -> Any:
        return N(text)


ENGLISH = Speaker()  # the English review's and receipts' words (client/review.py)


def _folded(text: str) -> str:
    """Lower case without accents: "Sí" -> "si"."""
    decomposed = unicodedata.normalize("NFD", text.strip().casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words_for(language: str | None) -> Words:
    """The catalogue for a survey language tag (es-MX -> es); English when there is none."""
    primary = (language or "en").split("-")[0].lower()
    return Words(primary if primary in CATALOGUES else "en")


# --- the message syntax (js/i18n.js parseMessage) ----------------------------------------------

ARGUMENT = re.compile(r"\{\s*(\w+)\s*(?:,\s*(plural|select)\s*,)?\s*")
CASE = re.compile(r"\s*(=\d+|\w+)\s*\{")


@cache
def parse_message(source: str) -> list[Any]:
    """A message as nodes: text, ("arg", name), ("#", name), ("choice", name, kind, cases);
    SyntaxError where the page's parseMessage throws."""
    i = 0

    def nodes(count: str | None, nested: bool) -> list[Any]:
        nonlocal i
        out: list[Any] = []
        text = ""
        while i < len(source) and not (nested and source[i] == "}"):
            c = source[i]
            if c == "#" and count is not None:
                out += [text, ("#", count)]
                text = ""
                i += 1
            elif c == "{":
                out.append(text)
                text = ""
                m = ARGUMENT.match(source, i)
                if m is None:
                    raise SyntaxError(f"a placeholder needs a name at {i} in {source!r}")
                i = m.end()
                name, kind = m.group(1), m.group(2)
                if not kind:
                    if source[i:i + 1] != "}":
                        raise SyntaxError(f"a placeholder ends with }} at {i} in {source!r}")
                    i += 1
                    out.append(("arg", name))
                    continue
                cases: dict[str, list[Any]] = {}
                while (c2 := CASE.match(source, i)) is not None:
                    i = c2.end()
                    cases[c2.group(1)] = nodes(name if kind == "plural" else count, True)
                    if source[i:i + 1] != "}":
                        raise SyntaxError(f"a case ends with }} at {i} in {source!r}")
                    i += 1
                while source[i:i + 1] == " ":
                    i += 1
                if source[i:i + 1] != "}" or "other" not in cases:
                    raise SyntaxError(f"{kind} needs an other case and a }} at {i} in "
                                      f"{source!r}")
                i += 1
                out.append(("choice", name, kind, cases))
            elif c == "}":
                raise SyntaxError(f"an unmatched }} at {i} in {source!r}")
            else:
                text += c
                i += 1
        out.append(text)
        return [n for n in out if n != ""]

    parsed = nodes(None, False)
    if i != len(source):
        raise SyntaxError(f"an unmatched }} at {i} in {source!r}")
    return parsed
