"""No sentence a respondent reads is hard-coded in the page's code: every string literal (and
every literal part of a template) of client/web/js outside the message catalogue is read, and
one that reads like English words fails, unless it is a technical diagnostic (the message of an
Error/Mismatch the page only shows as the {detail} of a translated refusal, or logs) or lives in
a module whose words are English by design, each named below with the reason. A new sentence
written into el(...), a return or a variable fails here even when no browser test reaches it
(tests/web/test_page_pseudo_locale.py checks what the page shows)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "client" / "web"
JS = WEB / "js"

# Modules whose text is never the page's words, and why.
ENGLISH_BY_DESIGN = {
    "boot.js": "a classic script that explains, where modules cannot run (file://) and before "
               "any catalogue can load, why nothing works; no catalogue is reachable there",
    "conditions.js": "the skip-logic parser's diagnostics of a signed condition: shown only as "
                     "the technical {detail} of the translated refusal refusal.skipLogic",
    "canonical.js": "rebuilds the signed bytes: its errors only make a survey non-canonical",
    "prio3/": "the Prio3 port: its errors (MeasurementError) name a value that fails a check",
}
# A literal on a line saying `// not words: <why>` is data, not words (a wire value, a hash's
# formula in the signed parameters).
NOT_WORDS = "// not words:"
CSS = re.compile(r"[\w.#:-]+\s*\{[^}]*:[^}]*;")
# A literal inside one of these calls is a diagnostic, not the page's words.
TECHNICAL_CALL = re.compile(
    r"^(new\s+\w*(Error|Mismatch|Unsupported\w*)|super|console\.\w+|\w*(Error|Mismatch))$")
WORD = re.compile(r"[A-Za-z_$][\w$]*")
FUNCTION_WORDS = {"the", "your", "you", "this", "that", "is", "are", "was", "will", "with",
                  "and", "not", "of", "to", "for", "be", "it", "its", "an", "or", "on", "in",
                  "can", "has", "have", "from", "any", "no", "my", "a", "at", "by", "as", "if"}


@dataclass
class Literal:
    path: str
    line: int
    text: str
    call: str  # the call it is an argument of, innermost first technical one wins ("" if none)


def literals(path: Path) -> list[Literal]:
    """Every string literal and literal template part of a JS file, with the innermost call
    whose arguments hold it (a small lexer: comments, regex literals, nested templates)."""
    src = path.read_text(encoding="utf-8")
    out: list[Literal] = []
    calls: list[str] = []  # per open bracket: its call's name ("" for a non-call bracket)
    i = 0
    prev = ""  # the previous significant character (regex or division?)

    def technical() -> str:
        return next((c for c in reversed(calls) if TECHNICAL_CALL.match(c)), "")

    starts = [m.end() for m in re.finditer("\n", src)]

    def line() -> int:
        return bisect.bisect_right(starts, i) + 1

    def callee(end: int) -> str:
        head = src[max(0, end - 120):end].rstrip()
        m = re.search(r"((?:new\s+)?[\w$.]+)\s*$", head)
        return m.group(1) if m else ""

    def template() -> None:
        nonlocal i
        i += 1
        start = i
        part = []
        while i < len(src):
            c = src[i]
            if c == "\\":
                part.append(src[i:i + 2])
                i += 2
            elif c == "`":
                out.append(Literal(path.name, line(), "".join(part), technical()))
                i += 1
                return
            elif src.startswith("${", i):
                out.append(Literal(path.name, line(), "".join(part), technical()))
                part = []
                i += 2
                code(until="}")
                i += 1
                start = i
            else:
                part.append(c)
                i += 1
        raise AssertionError(f"{path}: unterminated template from {start}")

    def code(until: str = "") -> None:
        nonlocal i, prev
        depth = 0
        while i < len(src):
            c = src[i]
            if until and c == "}" and depth == 0:
                return
            if src.startswith("//", i):
                i = src.find("\n", i)
                i = len(src) if i < 0 else i
            elif src.startswith("/*", i):
                i = src.index("*/", i) + 2
            elif c in "\"'":
                end = i + 1
                while src[end] != c:
                    end += 2 if src[end] == "\\" else 1
                out.append(Literal(path.name, line(), src[i + 1:end], technical()))
                i = end + 1
                prev = "a"
            elif c == "`":
                template()
                prev = "a"
            elif c == "/" and (prev in "(,=:[!&|?{};+-*%<>~^" or prev == ""):
                end = i + 1
                in_class = False
                while src[end] != "/" or in_class:
                    if src[end] == "\\":
                        end += 1
                    elif src[end] == "[":
                        in_class = True
                    elif src[end] == "]":
                        in_class = False
                    end += 1
                i = end + 1
                while i < len(src) and src[i].isalpha():
                    i += 1
                prev = "a"
            elif c in "([{":
                calls.append(callee(i) if c == "(" else "")
                depth += 1
                i += 1
                prev = c
            elif c in ")]}":
                if calls:
                    calls.pop()
                depth -= 1
                i += 1
                prev = c
            else:
                if not c.isspace():
                    prev = "a" if (c.isalnum() or c in "_$") else c
                    word = WORD.match(src, i)
                    if word:
                        if word.group(0) in ("return", "typeof", "case", "in", "of"):
                            prev = "("
                        i += len(word.group(0))
                        continue
                i += 1

    code()
    return out


def reads_as_words(text: str) -> bool:
    """English words a person reads: two or more words, and either a function word among
    them or a capitalized first word ("Technical details")."""
    words = re.findall(r"[A-Za-z][a-z'’]*", text)
    if len(words) < 2 or not re.search(r"[A-Za-z]{2,}\s+[A-Za-z]", text):
        return False
    return any(w.lower() in FUNCTION_WORDS for w in words) or bool(
        re.match(r"\s*[A-Z][a-z]+\s+[a-z]+", text))


def hard_coded() -> list[str]:
    found = []
    for path in sorted(JS.rglob("*.js")):
        rel = path.relative_to(JS).as_posix()
        if rel.startswith("messages/") or any(rel.startswith(p) for p in ENGLISH_BY_DESIGN):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for lit in literals(path):
            if lit.call or CSS.search(lit.text) or not reads_as_words(lit.text):
                continue
            if NOT_WORDS in lines[lit.line - 1]:
                continue
            found.append(f"{rel}:{lit.line}: {lit.text[:80]!r}")
    return found


def test_no_sentence_is_hard_coded_in_the_page():
    assert hard_coded() == []


def test_the_check_finds_a_new_hard_coded_sentence(tmp_path, monkeypatch):
    """The check itself: sentences added in each way the page writes text are caught, and
    diagnostics, keys, selectors and CSS are not."""
    sample = tmp_path / "js"
    sample.mkdir()
    (sample / "caught.js").write_text("""
        const a = el("p", {}, "Your answer is kept here.");
        const b = `Thank you, ${name}: your answers were sent.`;
        function c() { return "Technical details"; }
        status.textContent = 'Nothing was sent';
        const d = x ? "Send it now" : t("review.send");
    """)
    (sample / "fine.js").write_text("""
        throw new ManifestMismatch(`${where}: the parameters do not match`);
        const re = /a b "c d"/g; const e = t("page.lead", { n: 1 });
        console.error("this is logged, not shown");
        const css = `.grid { display: grid; gap: 1px; }`; const q = "#status, .lead";
        class X extends Error { constructor() { super("already answered by this device"); } }
    """)
    monkeypatch.setattr(__import__(__name__), "JS", sample)
    found = {tuple(line.split(":")[:2]) for line in hard_coded()}
    assert found == {("caught.js", str(n)) for n in range(2, 7)}
