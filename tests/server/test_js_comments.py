"""The page's JavaScript as served (server/js_comments.py): comments, indentation and the spaces
no token needs out, every token and line break kept, and nothing changed where the tokenizer
cannot be sure. The browser tests (tests/web) run every shared vector through this form
(tests/web/static_server.py)."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ldpsurvey.server.js_comments import Unsure, strip
from ldpsurvey.server.page_files import PageFiles, served_bytes
from ldpsurvey.server.web_page import web_dir

SHIPPED = sorted((web_dir() / "js").rglob("*.js"))


@pytest.mark.parametrize(("source", "served"), [
    ("let a = 1; // one\nlet b = 2;", "let a=1;\nlet b=2;"),
    ("  if (a) {\n    b();  \n  }\n", "if(a){\nb();\n}\n"),
    ("a/**/b", "a b"),
    ("a-/**/-b", "a- -b"),
    ("/** doc\n * more\n */\nexport const x = 1;", "\n\n\nexport const x=1;"),
    # ASI: a comment's line breaks stay line breaks
    ("let a = b\n/* c\n */(d)", "let a=b\n\n(d)"),
    # literals keep their comment-like text and their white space
    ('const u = "http://x/*y*/  z"; // c', 'const u="http://x/*y*/  z";'),
    ("const s = 'it\\'s // not';", "const s='it\\'s // not';"),
    ("const t = `a  // b\n  /* c */ ${x /* d */} e`;", "const t=`a  // b\n  /* c */ ${x} e`;"),
    ("const t = `${`in ${ {a: 1}.a /* c */ } //`}  `;", "const t=`${`in ${{a:1}.a} //`}  `;"),
    ("const r = /\\/\\/[/*]+/g; // c", "const r=/\\/\\/[/*]+/g;"),
    ("x = a / b / c; // d", "x=a / b / c;"),
    ("x = (a + b) / 2 /* half */;", "x=(a + b)/ 2;"),
    ("if (ok) /a\\/\\/b/.test(s); // c", "if(ok)/a\\/\\/b/.test(s);"),
    ("while (f(x)) /[//]/.exec(s);", "while(f(x))/[//]/.exec(s);"),
    ("return /\\/*x/.test(s) // c", "return /\\/*x/.test(s)"),
    ("y = x.return / 2 / 3;", "y=x.return / 2 / 3;"),
    ("y = o[k] / 2 / 3; z = 4 / 2;", "y=o[k]/ 2 / 3;z=4 / 2;"),
    ("y = typeof /x/; a /= 2 /* c */;", "y=typeof /x/;a /=2;"),
    ("f(a, /,/g, b => /=/.test(b));", "f(a,/,/g,b=> /=/.test(b));"),
    ("class A { #n = 1; get n() { return this.#n / 2; } }",
     "class A{#n=1;get n(){return this.#n / 2;}}"),
    ("a\r\n// c\r\nb", "a\n\nb"),
    # a space stays where two tokens would join or a name would run on: `- -`, `+ +`, `of "`
    ('x = a - -b, y = c + +d; for (const k of "ab" in o ? [] : [1]) void k;',
     'x=a - -b,y=c + +d;for(const k of "ab" in o ?[]:[1])void k;'),
])
def test_comments_and_indentation_go_and_every_token_stays(source, served):
    assert strip(source) == served
    assert strip(served) == served


@pytest.mark.parametrize("source", [
    "function f() {}\n/x/.test(s)",  # a block's } or an object's: regex or division
    "a++ / 2",
    "of / 2",
    "x = 1 <!-- 2",
    "a\n--> b",
    "const \\u0061 = 1;",
    "const é = 1;",
    "'unterminated",
    "x = /unterminated\n/",
    "`unterminated",
    "/* unterminated",
    "f(a",
    "a)",
])
def test_what_it_cannot_be_sure_of_it_does_not_touch(source):
    with pytest.raises(Unsure):
        strip(source)


def test_a_file_it_is_unsure_of_is_served_as_written(tmp_path: Path):
    unsure = tmp_path / "unsure.js"
    unsure.write_text("function f() {} // c\n/x/.test(s)\n")
    assert served_bytes(unsure) == unsure.read_bytes()
    css = tmp_path / "page.css"
    css.write_text("/* kept */ a { b: c }\n")
    assert served_bytes(css) == css.read_bytes()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(web_dir())))
def test_every_module_the_page_ships_is_served_stripped_with_its_lines(path: Path):
    """No shipped module falls back to its written form (a `/` after `}` and the like: write
    it another way), and each keeps its line count, so errors name the repository's lines."""
    source = path.read_text(encoding="utf-8")
    served = strip(source)
    assert served.count("\n") == source.count("\n")
    assert strip(served) == served
    assert len(served) < len(source)


def test_the_page_weighs_about_a_fifth_less_on_the_wire():
    """Comments were about a fifth of the page's modules, compressed (issue 40)."""
    written = sum(len(gzip.compress(p.read_bytes(), 9)) for p in SHIPPED)
    served = sum(len(gzip.compress(served_bytes(p), 9)) for p in SHIPPED)
    assert served < 0.8 * written, (written, served)


@pytest.mark.skipif(shutil.which("node") is None and os.environ.get("CI") != "true",
                    reason="no `node` on PATH to parse the served modules")
def test_node_parses_every_served_module(tmp_path: Path):
    """An independent parser (V8, in Node) accepts every module as served."""
    failures = []
    for path in SHIPPED:
        module = tmp_path / (path.relative_to(web_dir()).as_posix().replace("/", "_") + ".mjs")
        module.write_bytes(served_bytes(path))
        result = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True,
                                timeout=60)
        if result.returncode:
            failures.append(f"{path.name}: {result.stderr.strip()[:300]}")
    assert failures == []


def test_the_aggregator_serves_the_stripped_form(tmp_path: Path):
    root = tmp_path / "web"
    (root / "js").mkdir(parents=True)
    (root / "js" / "a.js").write_text("// what and why\nexport const a = 1; /* a */\n")
    served = PageFiles(root).get("js/a.js")
    assert served.raw == b"\nexport const a=1;\n"
