"""The page's message catalogue read without a browser: client/web/js/messages/<lang>/<part>.js,
each `export default {JSON object};`, and the ICU MessageFormat subset js/i18n.js speaks
("{name}", "{n, plural, =0 {…} one {…} other {…}}", "{k, select, yes {…} other {…}}", "#" the
innermost plural's count). Shared by tests/client/test_page_catalogue.py and the browser tests
that build catalogues of their own (a pseudo-locale)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ldpsurvey.client.page_words import ARGUMENT, CASE, parse_message

WEB = Path(__file__).resolve().parents[2] / "client" / "web"
MESSAGES = WEB / "js" / "messages"
PREFIX = "export default "

# CLDR plural categories of each catalogue language (Intl.PluralRules(lang).resolvedOptions())
PLURAL_CATEGORIES = {"en": {"one", "other"}, "es": {"one", "many", "other"},
                     "fr": {"one", "many", "other"}}


def read_part(path: Path) -> dict[str, str]:
    """One part file's messages; ValueError unless it is exactly `export default {...};`."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith(PREFIX) or not text.rstrip().endswith("};"):
        raise ValueError(f"{path}: not `export default {{...}};`")
    data = json.loads(text[len(PREFIX):].rstrip()[:-1])
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f"{path}: not an object of strings")
    return data


def catalogue() -> dict[str, dict[str, dict[str, str]]]:
    """{language: {part: {key: message}}} as shipped."""
    return {lang.name: {part.stem: read_part(part) for part in sorted(lang.glob("*.js"))}
            for lang in sorted(MESSAGES.iterdir()) if lang.is_dir()}


def write_part(path: Path, messages: dict[str, str]) -> None:
    lines = [f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
             for k, v in messages.items()]
    path.write_text(PREFIX + "{\n" + ",\n".join(lines) + "\n};\n", encoding="utf-8")


@dataclass
class Shape:
    """What a message says with: its simple placeholders, and per plural/select argument the
    kind and its cases."""

    simple: set[str] = field(default_factory=set)
    choices: dict[str, tuple[str, set[str]]] = field(default_factory=dict)

    @property
    def names(self) -> set[str]:
        return self.simple | set(self.choices)


def shape(message: str) -> Shape:
    """The message's shape; SyntaxError where js/i18n.js parseMessage would throw (the parse is
    client/page_words.py's, the CLI's port of it; this adds that an argument is plural or
    select, not both)."""
    out = Shape()

    def walk(nodes: list[Any]) -> None:
        for node in nodes:
            if isinstance(node, str) or node[0] == "#":
                continue
            if node[0] == "arg":
                out.simple.add(node[1])
                continue
            _, name, kind, cases = node
            previous = out.choices.get(name)
            if previous is not None and previous[0] != kind:
                raise SyntaxError(f"{name} is both plural and select: {message!r}")
            out.choices[name] = (kind, set(cases) | (previous[1] if previous else set()))
            for case in cases.values():
                walk(case)

    walk(parse_message(message))
    return out


_MARK = "\u0301"  # a combining acute accent after every letter: no two ASCII letters touch


def pseudo(message: str) -> str:
    """The message in a pseudo-locale: every letter of its text accented (placeholders, plural
    and select syntax untouched), so a page showing only catalogue words shows no run of plain
    ASCII letters, and any such run is a word hard-coded in the page."""
    out: list[str] = []
    i = 0

    def text_until(nested: bool) -> None:
        nonlocal i
        while i < len(message) and not (nested and message[i] == "}"):
            c = message[i]
            if c == "{":
                m = ARGUMENT.match(message, i)
                assert m, message
                out.append(message[i:m.end()])
                i = m.end()
                if not m.group(2):
                    out.append("}")
                    i += 1
                    continue
                while (c2 := CASE.match(message, i)) is not None:
                    out.append(message[i:c2.end()])
                    i = c2.end()
                    text_until(True)
                    out.append("}")
                    i += 1
                while message[i] == " ":
                    out.append(" ")
                    i += 1
                out.append("}")
                i += 1
            else:
                out.append(c + _MARK if c.isascii() and c.isalpha() else c)
                i += 1

    text_until(False)
    return "".join(out)
