"""The page's message catalogue is complete in every language (no browser needed): the same
parts and keys as English, no extra key, every message parses, and says what English says with
the same placeholders, the same select cases and English's exact plural cases; plural
categories are the language's own. The page loads every file the catalogue has (optional.js),
names every language it has (i18n.js CATALOGUES), and every key the page's code names exists
in English and every English key is named by the code (docs/languages.md, "The page")."""

from __future__ import annotations

import re

import pytest
from support.page_catalogue import MESSAGES, PLURAL_CATEGORIES, WEB, catalogue, shape

CATALOGUE = catalogue()
LANGUAGES = sorted(CATALOGUE)
KEY = re.compile(r"\"([a-z]+\.[A-Za-z0-9]+)\"")


def code_keys() -> set[str]:
    """Every string literal of the page's code that has a message key's form ("part.name")."""
    keys: set[str] = set()
    for path in (WEB / "js").rglob("*.js"):
        if MESSAGES not in path.parents:
            keys |= set(KEY.findall(path.read_text(encoding="utf-8")))
    return keys


def test_english_is_there_and_every_language_has_the_same_parts_and_keys():
    assert "en" in CATALOGUE and {"core"} <= set(CATALOGUE["en"])
    for lang in LANGUAGES:
        assert set(CATALOGUE[lang]) == set(CATALOGUE["en"]), lang
        for part, messages in CATALOGUE["en"].items():
            missing = set(messages) - set(CATALOGUE[lang][part])
            extra = set(CATALOGUE[lang][part]) - set(messages)
            assert not missing, f"{lang}/{part}.js lacks {sorted(missing)}"
            assert not extra, f"{lang}/{part}.js has keys English has not: {sorted(extra)}"


def test_no_key_is_in_two_parts():
    seen: dict[str, str] = {}
    for part, messages in CATALOGUE["en"].items():
        for key in messages:
            assert key not in seen, f"{key} in {seen.get(key)} and {part}"
            seen[key] = part


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_says_it_with_englishs_placeholders(lang):
    categories = PLURAL_CATEGORIES[lang]
    for part, messages in CATALOGUE["en"].items():
        for key, english in messages.items():
            theirs = CATALOGUE[lang][part][key]
            assert theirs.strip(), f"{lang} {key} is empty"
            want, got = shape(english), shape(theirs)
            assert got.names == want.names, f"{lang} {key}: {sorted(got.names)} != " \
                                            f"{sorted(want.names)}"
            for name, (kind, cases) in got.choices.items():
                if kind == "plural":
                    words = {c for c in cases if not c.startswith("=")}
                    assert words <= categories, f"{lang} {key}: {name} has {sorted(words)}"
                    exact = {c for c in want.choices.get(name, ("", set()))[1]
                             if c.startswith("=")}
                    assert exact <= cases, f"{lang} {key}: {name} lacks {sorted(exact)}"
                else:
                    assert want.choices[name] == (kind, cases), f"{lang} {key}: {name}"
            for name, (kind, _) in want.choices.items():
                if kind == "select":
                    assert name in got.choices, f"{lang} {key}: {name} must stay a select"


def test_the_shape_check_catches_what_it_must():
    assert shape("{a} and {n, plural, one {# x} other {# xs}}").names == {"a", "n"}
    for broken in ("{a", "a}", "{n, plural, one {x}}", "{n, plural, other {x}", "{}"):
        with pytest.raises(SyntaxError):
            shape(broken)


def test_the_page_knows_every_language_and_loads_every_file():
    i18n = (WEB / "js" / "i18n.js").read_text()
    (listed,) = re.findall(r"CATALOGUES = Object\.freeze\(\[([^\]]*)\]\)", i18n)
    assert sorted(re.findall(r'"([a-z]+)"', listed)) == LANGUAGES
    optional = (WEB / "js" / "optional.js").read_text()
    loaded = set(re.findall(r'import\("\./messages/([a-z]+)/([a-z]+)\.js"\)', optional))
    shipped = {(lang, part) for lang in LANGUAGES for part in CATALOGUE[lang]}
    assert loaded == shipped - {("en", "core")}  # English's core is imported by i18n.js
    assert 'import CORE from "./messages/en/core.js";' in i18n


def test_the_code_names_only_english_keys_and_every_english_key():
    english = {key for messages in CATALOGUE["en"].values() for key in messages}
    named = code_keys()
    prefixes = {key.split(".")[0] for key in english}
    unknown = {k for k in named if k.split(".")[0] in prefixes} - english
    assert not unknown, f"the page names messages English lacks: {sorted(unknown)}"
    unused = english - named
    assert not unused, f"messages no code names: {sorted(unused)}"
