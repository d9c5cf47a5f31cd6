"""The page's message catalogue in Chromium (tests/client/test_page_catalogue.py checks the
files without a browser): every file of every language loads as the page loads it and every
message parses with js/i18n.js itself, with English's placeholders; and the privacy sentences
state, in Spanish and French, the very numbers the English ones state (the same digits, rounded
the same way up, per locale: "2,8", "74 %"), for the odds words and for every mechanism's exact
chances of the shared vectors."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.page_catalogue import catalogue, shape
from vectors import build_vectors

CATALOGUE = catalogue()
LOCALES = [("es", "es-ES"), ("fr", "fr-FR"), ("es", "es-MX"), ("fr", "fr-CA")]

PARSED = """async ([root, files]) => {
    const I = await import(root + "js/i18n.js");
    const out = {};
    for (const [lang, part] of files) {
        const words = (await import(`${root}js/messages/${lang}/${part}.js`)).default;
        out[`${lang}/${part}`] = Object.fromEntries(Object.entries(words).map(([key, m]) => {
            const names = new Set();
            const walk = (nodes) => nodes.forEach((n) => {
                if (typeof n === "string") return;
                names.add(n.arg ?? n.hash);
                if (n.cases) Object.values(n.cases).forEach(walk);
            });
            walk(I.parseMessage(m));
            return [key, [...names].sort()];
        }));
    }
    return out;
}"""


def test_every_file_loads_and_every_message_parses_in_the_browser(js_page: Any,
                                                                   web_root_url: str) -> None:
    files = [[lang, part] for lang in CATALOGUE for part in CATALOGUE[lang]]
    parsed = js_page.evaluate(PARSED, [web_root_url, files])
    for lang, part in files:
        english = parsed[f"en/{part}"]
        theirs = parsed[f"{lang}/{part}"]
        assert set(theirs) == set(english), f"{lang}/{part}"
        for key, names in theirs.items():
            assert names == english[key], f"{lang} {key}"
            assert set(names) == shape(CATALOGUE[lang][part][key]).names, f"{lang} {key}"


SPEAK = """async ([root, lang, tag]) => {
    const I = await import(root + "js/i18n.js");
    await (await import(root + "js/optional.js")).loadWords(lang);
    I.useWords(lang, tag);
    const parts = new Intl.NumberFormat(tag).formatToParts(12345.6);
    return ["group", "decimal"].map((t) => parts.find((p) => p.type === t).value);
}"""
ENGLISH = """async (root) => (await import(root + "js/i18n.js")).useWords("en", "en")"""


def speak(js_page: Any, root: str, lang: str, tag: str) -> tuple[str, str]:
    group, decimal = js_page.evaluate(SPEAK, [root, lang, tag])
    return group, decimal


def measured(text: str, group: str = ",", decimal: str = ".") -> list[float]:
    """The measured numbers a sentence states, sorted: percentages and decimals (counts of
    options or items may be said in words: "the other option" for "the other 1 options")."""
    g, d = re.escape(group), re.escape(decimal)
    number = rf"\d+(?:{g}\d{{3}})*(?:{d}\d+)?(?:[eE][-+]?\d+)?"
    found = []
    for m in re.finditer(rf"({number})(\s?%)?", text):
        digits, percent = m.group(1), m.group(2)
        if percent or decimal in digits or "e" in digits.lower():
            found.append(float(digits.replace(group, "").replace(decimal, ".")))
    return sorted(found)


@pytest.fixture()
def english_after(js_page: Any, web_root_url: str) -> Any:
    yield
    js_page.evaluate(ENGLISH, web_root_url)


@pytest.mark.parametrize(("lang", "tag"), LOCALES)
def test_the_odds_words_state_the_english_numbers(js_page: Any, web_root_url: str,
                                                  english_after: Any, lang: str,
                                                  tag: str) -> None:
    epsilons = [0.05, 0.25, 0.5, 1, 1.5, 2.2, 3.5, 4.4998095, 7, 9.21, 12.345, 16.5, 20, 33.87]
    words = """async ([root, eps]) => {
        const O = await import(root + "js/odds.js");
        return eps.map((e) => [O.questionPrivacy(e), O.oddsSentence(e)]);
    }"""
    english = js_page.evaluate(words, [web_root_url, epsilons])
    group, decimal = speak(js_page, web_root_url, lang, tag)
    theirs = js_page.evaluate(words, [web_root_url, epsilons])
    for epsilon, mine, their in zip(epsilons, english, theirs, strict=True):
        for a, b in zip(mine, their, strict=True):
            assert a != b, (tag, epsilon)  # it is translated
            # the factor "34" is a count-like integer: say it in the numbers compared too
            assert measured(b, group, decimal) == measured(a), (tag, epsilon, a, b)
            factor = re.search(r"at most ([\d,.]+) times", a)
            if factor:
                want = factor.group(1).replace(",", "")
                assert want.replace(".", decimal) in b.replace(group, ""), (tag, b)


@pytest.mark.parametrize(("lang", "tag"), LOCALES[:2])
def test_every_mechanisms_chances_state_the_english_numbers(js_page: Any, web_root_url: str,
                                                            english_after: Any, lang: str,
                                                            tag: str) -> None:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for case in build_vectors()["cases"]:
        q = case["question"]
        seen.setdefault((q["mechanism"], q["type"], q.get("instantaneous_epsilon") is not None,
                         q["epsilon"]), case)
    cases = list(seen.values())
    chances = """async ([root, cases]) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        return cases.map((c) => {
            const q = c.question;
            const m = M.mechanismFor(q);
            const answer = q.type === "integer" ? Number(c.answer) : c.answer;
            return [R.chances(q, m, answer), m.describe().text];
        });
    }"""
    english = js_page.evaluate(chances, [web_root_url, cases])
    group, decimal = speak(js_page, web_root_url, lang, tag)
    theirs = js_page.evaluate(chances, [web_root_url, cases])
    for case, mine, their in zip(cases, english, theirs, strict=True):
        for a, b in zip(mine, their, strict=True):
            assert "NaN" not in b and "undefined" not in b and "{" not in b, b
            assert measured(b, group, decimal) == measured(a), (tag, case["question"], a, b)


@pytest.mark.parametrize(("lang", "tag"), LOCALES[:2])
def test_the_not_asked_chances_state_the_english_numbers(js_page: Any, web_root_url: str,
                                                         english_after: Any, lang: str,
                                                         tag: str) -> None:
    """Skip logic's words (a question sent as 'not asked' or not), every skip vector."""
    from skip_vectors import build_skip_vectors

    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for case in build_skip_vectors():
        q = case["question"]
        seen.setdefault((q["mechanism"], q["type"], case["answer"] == "(not asked)"), case)
    cases = list(seen.values())
    words = """async ([root, cases]) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        return cases.map((c) => {
            const q = c.question;
            const m = M.mechanismFor(q, { notAsked: true });
            const answer = q.type === "integer" && c.answer !== "(not asked)"
              ? Number(c.answer) : c.answer;
            return [R.chances(q, m, answer), m.describe().text];
        });
    }"""
    english = js_page.evaluate(words, [web_root_url, cases])
    group, decimal = speak(js_page, web_root_url, lang, tag)
    theirs = js_page.evaluate(words, [web_root_url, cases])
    for case, mine, their in zip(cases, english, theirs, strict=True):
        for a, b in zip(mine, their, strict=True):
            assert a != b and "{" not in b and "undefined" not in b, b
            assert measured(b, group, decimal) == measured(a), (tag, case["question"], a, b)


@pytest.mark.parametrize(("lang", "tag"), LOCALES[:2])
@pytest.mark.parametrize("local", [False, True])
def test_the_two_server_words_state_the_english_numbers(js_page: Any, web_root_url: str,
                                                        english_after: Any, lang: str, tag: str,
                                                        local: bool) -> None:
    from ldpsurvey.shared.survey import Survey
    from support.two_server import two_server_survey

    survey = Survey.from_dict(two_server_survey("https://helper.example:8443", b"h" * 32,
                                                b"l" * 32, local=local)).to_dict()
    words = """async ([root, survey]) => {
        const F = await import(root + "js/twoserver/flow.js");
        const verified = { survey, twoServer: { helperUrl: "https://helper.example:8443" } };
        const answers = new Map([["smoker", true], ["mood", "mid"], ["hours", null]]);
        return [...survey.questions.map((q) => F.hint(q)),
                F.reviewList(verified, answers, "http://127.0.0.1:8000").textContent,
                ...F.explanation(verified, "http://127.0.0.1:8000").map((e) => e.textContent)];
    }"""
    english = js_page.evaluate(words, [web_root_url, survey])
    group, decimal = speak(js_page, web_root_url, lang, tag)
    theirs = js_page.evaluate(words, [web_root_url, survey])
    hosts = re.compile(r"127\.0\.0\.1:8000|helper\.example:8443")
    for a, b in zip(english, theirs, strict=True):
        assert a != b and "{" not in b and "undefined" not in b, b
        assert sorted(hosts.findall(a)) == sorted(hosts.findall(b)), (tag, a, b)
        a, b = hosts.sub("", a), hosts.sub("", b)
        assert measured(b, group, decimal) == measured(a), (tag, a, b)
