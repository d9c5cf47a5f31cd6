"""The page's JavaScript as served: its comments and indentation left out, its lines kept.

The page's modules are written for their readers (client/web/js: long comments saying what and
why), and the aggregator serves every byte of them to every respondent: about a fifth of what
a page loads was comments, compressed. `strip(source)` returns the same program without them:
a tokenizer walks the source (strings, template literals with their `${}` substitutions,
regular expression literals, comments) and keeps every token's text as it is, in order; only
comments and the white space between tokens change:

- a comment becomes nothing but the line breaks it held, or one space (never nothing: `a/**/b`
  is `a b`);
- the white space between two tokens becomes its line breaks, or one space, or nothing where
  one of the two is a punctuator that joins no neighbour into a longer token (`{}()[];,:=`:
  `x = f(a, b);` is served `x=f(a,b);`); indentation and trailing spaces go.

Line breaks are never removed or added, so automatic semicolon insertion sees the same program
and every line keeps its number (a stack trace in the browser names the repository's line).

Where a `/` starts a regular expression and where it divides depends on the token before it;
`_regex_allowed` decides it for every case it can decide from that token (and, after `)`, from
what opened the parenthesis). Where it cannot be sure (a `/` after a `}`, after `++`/`--`, after
a name that is a keyword only sometimes), or on anything else it does not know (HTML-like
comments, a backslash outside a literal, an unterminated literal), it raises `Unsure` and the
caller serves the file as written: stripping is an optimization, never a guess.
tests/server/test_js_comments.py checks it on the hard cases and on every file the page ships;
the browser tests (tests/web) load the page's modules in the served form.
"""

from __future__ import annotations

import re

__all__ = ["Unsure", "static_imports", "strip"]


class Unsure(ValueError):
    """The source has something the tokenizer does not decide with certainty."""


# after these keywords an expression starts, so a `/` opens a regular expression
_REGEX_KEYWORDS = frozenset({"return", "typeof", "instanceof", "in", "new", "delete", "void",
                             "throw", "case", "do", "else", "extends"})
# names that are keywords only in some places: a `/` after them is left undecided
_SOMETIMES_KEYWORDS = frozenset({"of", "yield", "await", "let", "async", "get", "set",
                                 "static"})
# a parenthesis after these closes a statement's head: a `/` after its `)` opens a regex
_STATEMENT_HEADS = frozenset({"if", "while", "for", "with"})
_NAME = re.compile(r"#?[A-Za-z_$][A-Za-z0-9_$]*")  # ASCII names only (else: Unsure)
_NUMBER = re.compile(r"(?:0[xXbBoO][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)"
                     r"(?:[eE][+-]?\d[\d_]*)?)n?")
_PUNCTUATORS = ("?.", "=>", "++", "--", "...")
_ONE_CHAR = frozenset("{}()[];,<>+-*%&|^!~?:=.@")
# punctuators that form no longer token with a neighbour in a valid program (`=` could only
# with an operator beside it, `a < = b`, which is no program): no space is needed beside them
_JOINS_NOTHING = frozenset("{}()[];,:=")
_LINE_BREAKS = frozenset("\n\r\u2028\u2029")
_SPACE = frozenset(" \t\v\f\ufeff\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                   "\u2008\u2009\u200a\u202f\u205f\u3000")


def _line_breaks(text: str) -> int:
    """How many line terminators `text` holds (CR LF counted once)."""
    return sum(text.count(c) for c in _LINE_BREAKS) - text.count("\r\n")


class _Tokenizer:
    def __init__(self, source: str) -> None:
        self.src = source
        self.i = 0
        self.out: list[str] = []
        self.gap_breaks = 0  # line breaks in the gap (white space and comments) being read
        self.gap = False  # whether there is a gap before the next token
        self.last = ""  # the last significant token ("" at the start)
        self.before_last = ""
        self.parens: list[bool] = []  # per open "(": whether it is a statement's head
        self.braces: list[str] = []  # per open "{" or "${": "block" or "template"
        self.tokens: list[tuple[str, str]] = []  # (kind, text): punct, name, string, literal

    # --- output ---

    def emit(self, token: str, kind: str = "punct") -> None:
        if self.out:
            if self.gap_breaks:
                self.out.append("\n" * self.gap_breaks)
            elif self.gap and not (self.out[-1][-1] in _JOINS_NOTHING
                                   or token[0] in _JOINS_NOTHING):
                self.out.append(" ")
        elif self.gap_breaks:
            self.out.append("\n" * self.gap_breaks)  # the first line keeps its number
        self.out.append(token)
        self.tokens.append((kind, token))
        self.gap, self.gap_breaks = False, 0
        self.before_last = self.last
        self.last = token if kind in ("punct", "name") else "literal"

    # --- the walk ---

    def run(self) -> str:
        src, n = self.src, len(self.src)
        while self.i < n:
            c = src[self.i]
            if c in _LINE_BREAKS:
                self.gap, self.i = True, self.i + 1
                if not (c == "\n" and self.i >= 2 and src[self.i - 2] == "\r"):
                    self.gap_breaks += 1
            elif c in _SPACE:
                self.gap, self.i = True, self.i + 1
            elif src.startswith("//", self.i):
                end = self._line_end(self.i)
                self.gap, self.i = True, end
            elif src.startswith("/*", self.i):
                end = src.find("*/", self.i + 2)
                if end < 0:
                    raise Unsure(f"an unterminated comment at {self.i}")
                self.gap_breaks += _line_breaks(src[self.i:end])
                self.gap, self.i = True, end + 2
            elif c in "'\"":
                self.emit(self._string(c), "string")
            elif c == "`":
                self._template()
            elif c == "/":
                if self._regex_allowed():
                    self.emit(self._regex(), "literal")
                else:
                    op = "/=" if src.startswith("/=", self.i) else "/"
                    self.i += len(op)
                    self.emit(op)
            elif src.startswith("<!--", self.i) or src.startswith("-->", self.i):
                raise Unsure(f"an HTML-like comment at {self.i}")
            elif c == "\\":
                raise Unsure(f"a backslash outside a literal at {self.i}")
            elif (match := _NUMBER.match(src, self.i)) and (c.isdigit() or c == "."):
                self.i = match.end()
                self.emit(match.group(), "literal")
            elif match := _NAME.match(src, self.i):
                self.i = match.end()
                name = match.group()
                after_dot = self.last in (".", "?.")
                self.emit(name, "name")
                if after_dot:  # a property's name (x.return) is no keyword
                    self.last = "property"
            else:
                self._punctuator(c)
        if self.braces or self.parens:
            raise Unsure("unbalanced brackets")
        if self.gap_breaks:
            self.out.append("\n" * self.gap_breaks)
        return "".join(self.out)

    def _punctuator(self, c: str) -> None:
        src = self.src
        if c not in _ONE_CHAR:
            raise Unsure(f"{c!r} outside a literal at {self.i}")
        op = next((p for p in _PUNCTUATORS if src.startswith(p, self.i)), c)
        self.i += len(op)
        if op == "(":
            head = self.last in _STATEMENT_HEADS or (
                self.last == "await" and self.before_last == "for")
            self.parens.append(head)
            self.emit(op)
        elif op == ")":
            if not self.parens:
                raise Unsure(f"an unmatched ) at {self.i}")
            head = self.parens.pop()
            self.emit(op)
            if head:
                self.last = "statement head"
        elif op == "{":
            self.braces.append("block")
            self.emit(op)
        elif op == "}":
            if not self.braces:
                raise Unsure(f"an unmatched }} at {self.i}")
            if self.braces.pop() == "template":
                self.emit_template_rest()
            else:
                self.emit(op)
        else:
            self.emit(op)

    def _regex_allowed(self) -> bool:
        """Whether a `/` here opens a regular expression (after an operator, an opening
        bracket, a statement head's `)`, some keywords) or divides (after a value)."""
        last = self.last
        if last in ("", "statement head") or last in _REGEX_KEYWORDS:
            return True
        if last in ("literal", "property", ")", "]"):
            return False
        if last in ("}", "++", "--") or last in _SOMETIMES_KEYWORDS:
            raise Unsure(f"a / after {last!r} at {self.i}")
        # after a name its value is divided; after any other punctuator an expression starts
        return not _NAME.fullmatch(last)

    # --- literals, kept as written ---

    def _line_end(self, i: int) -> int:
        ends = [j for j in (self.src.find(c, i) for c in _LINE_BREAKS) if j >= 0]
        return min(ends) if ends else len(self.src)

    def _string(self, quote: str) -> str:
        src, start = self.src, self.i
        i = start + 1
        while i < len(src):
            c = src[i]
            if c == "\\":
                i += 2  # an escape, or a line continuation
                if src.startswith("\r\n", i - 1):
                    i += 1
            elif c == quote:
                self.i = i + 1
                return src[start:i + 1]
            elif c in "\n\r":
                break
            else:
                i += 1
        raise Unsure(f"an unterminated string at {start}")

    def _regex(self) -> str:
        src, start = self.src, self.i
        i, in_class = start + 1, False
        while i < len(src):
            c = src[i]
            if c == "\\":
                i += 2
                continue
            if c in _LINE_BREAKS:
                break
            if c == "[":
                in_class = True
            elif c == "]":
                in_class = False
            elif c == "/" and not in_class:
                end = i + 1
                while end < len(src) and (src[end].isalnum() or src[end] in "_$"):
                    end += 1
                self.i = end
                return src[start:end]
            i += 1
        raise Unsure(f"an unterminated regular expression at {start}")

    def _template(self) -> None:
        """A template literal from its backtick up to its end or its first `${` (whose `}`
        continues it: emit_template_rest)."""
        self.i += 1
        self._emit_template("`" + self._template_chunk())

    def emit_template_rest(self) -> None:
        """The rest of a template literal after a substitution's `}`."""
        self._emit_template("}" + self._template_chunk())

    def _emit_template(self, text: str) -> None:
        self.emit(text, "literal")
        if text.endswith("${"):
            self.last = "${"  # a substitution's expression starts

    def _template_chunk(self) -> str:
        """The template's characters up to and including its closing backtick or next `${`."""
        src, start = self.src, self.i
        i = start
        while i < len(src):
            c = src[i]
            if c == "\\":
                i += 2
            elif c == "`":
                self.i = i + 1
                return src[start:i + 1]
            elif src.startswith("${", i):
                self.i = i + 2
                self.braces.append("template")
                return src[start:i + 2]
            else:
                i += 1
        raise Unsure(f"an unterminated template literal at {start}")


def strip(source: str) -> str:
    """`source` (an ECMAScript module or script) without its comments and indentation, with
    every token and every line break kept; `Unsure` where that cannot be done with certainty."""
    return _Tokenizer(source).run()


def static_imports(source: str) -> list[str]:
    """The module specifiers `source`'s static import declarations name (`import ... from "s"`,
    `import "s"`, `export ... from "s"`), in order; not `import()` or `import.meta`. `Unsure`
    as for strip. The server preloads a survey's modules by them (web_page.py)."""
    tokenizer = _Tokenizer(source)
    tokenizer.run()
    tokens = tokenizer.tokens
    specifiers = []
    for at, (kind, text) in enumerate(tokens):
        if kind != "name" or text not in ("import", "export") or (at and tokens[at - 1][1] in (
                ".", "?.")):
            continue
        following = tokens[at + 1][1] if at + 1 < len(tokens) else ""
        if text == "import" and following in ("(", "."):
            continue  # a dynamic import, import.meta
        if text == "import" and tokens[at + 1][0] == "string":
            specifiers.append(tokens[at + 1][1][1:-1])
            continue
        for j in range(at + 1, len(tokens) - 1):  # up to the declaration's `from "s"`
            if tokens[j][1] == ";" or (tokens[j][0] == "name" and tokens[j][1] in (
                    "import", "export", "const", "let", "var", "function", "class", "async",
                    "default")):
                break
            if tokens[j] == ("name", "from") and tokens[j + 1][0] == "string":
                specifiers.append(tokens[j + 1][1][1:-1])
                break
    return specifiers
