"""The page's files: nothing external, no Math.random, and every file shipped as package data."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "client" / "web"
FILES = sorted(p for p in WEB.rglob("*") if p.is_file())


def without_comments(js: str) -> str:
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return re.sub(r"(^|\s)//.*$", "", js, flags=re.M)


def test_the_page_references_only_its_own_files():
    index = (WEB / "index.html").read_text()
    for ref in re.findall(r'(?:src|href)="([^"]*)"', index):
        if ref.startswith("data:image/svg+xml,"):  # the inline icon: no request at all
            assert "http" not in ref.replace("http://www.w3.org/2000/svg", ""), ref
            continue
        assert ref.startswith(("js/", "css/")) and (WEB / ref).is_file(), ref
    for path in WEB.rglob("*.js"):
        code = without_comments(path.read_text())
        for spec in re.findall(r'(?:^|\s)(?:import|export)\b[^;]*?from\s+"([^"]+)"', code,
                               flags=re.M):
            target = (path.parent / spec).resolve()
            assert spec.startswith(("./", "../")) and target.is_file(), (path.name, spec)
            assert target.is_relative_to(WEB), (path.name, spec)
        dynamic = re.findall(r"\bimport\s*\(([^)]*)\)", code)
        if path.name != "optional.js":  # the one place that loads modules on demand
            assert not dynamic, f"{path.name}: dynamic import"
        for spec in dynamic:  # literal, relative, shipped
            assert re.fullmatch(r'"\./[a-z0-9_/]+\.js"', spec), (path.name, spec)
            assert (path.parent / spec.strip('"')).resolve().is_file(), (path.name, spec)
        named = code.replace('"http://www.w3.org/2000/svg"', "")  # a namespace, never fetched
        assert "http://" not in named and "https://" not in named, path.name
    for path in WEB.rglob("*.css"):
        css = path.read_text()
        assert "url(" not in css and "@import" not in css, path.name


def test_no_report_randomness_from_math_random():
    for path in WEB.rglob("*.js"):
        assert not re.search(r"Math\.random\s*\(", without_comments(path.read_text())), path


def test_every_page_file_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["ldpsurvey.client"]
    for path in FILES:
        relative = path.relative_to(ROOT / "client").as_posix()
        assert any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/")
                   for p in patterns), f"{relative} would not be installed"


def _frozen_table(code: str, name: str) -> dict[str, str]:
    """The `key: value` pairs of `const NAME = Object.freeze({...})` in a page module (values
    kept as written: a string's quotes stripped, an array as its text)."""
    body = re.search(rf"const {name} = Object\.freeze\(\{{(.*?)\}}\);", code, flags=re.S)
    assert body, f"no {name} table"
    pairs = re.findall(r'(\w+):\s*("[^"]*"|\[[^\]]*\]|\(\)\s*=>[^,\n]*)', body.group(1))
    return {key: value.strip('"') for key, value in pairs}


def test_the_loader_knows_the_module_of_every_core_it_loads():
    """optional.js holds which module a mechanism's core is in (mechanisms.js imports the
    loader, the loader imports no mechanism: no import circle): every named design of
    mechanisms.js is loaded with designs.js, and every core module is one the loader imports."""
    mechanisms = without_comments((WEB / "js" / "mechanisms.js").read_text())
    optional = without_comments((WEB / "js" / "optional.js").read_text())
    cores = _frozen_table(optional, "CORE_MODULES")
    listed = re.search(r"const DESIGNS = Object\.freeze\(\[(.*?)\]\);", mechanisms, flags=re.S)
    assert listed, "no DESIGNS list"
    designs = set(re.findall(r'"(\w+)"', listed.group(1)))
    assert designs == {"warner", "crosswise", "forced_response", "unrelated_question", "matrix"}
    assert {m for m, module in cores.items() if module == "designs"} == designs
    modules = {name for value in cores.values()  # a list: the modules of a composite core
               for name in (re.findall(r'"(\w+)"', value) if value.startswith("[") else [value])}
    assert "askedGrid" in modules and modules <= set(_frozen_table(optional, "IMPORTS"))


def test_the_draw_sources_only_tests_use_are_in_a_module_the_page_never_imports():
    """Issue 40's page weight: replaying and recording draws (the shared vectors, the no-reroll
    test) is tests' and benches' code; it lives in js/tapes.js, which no page module imports,
    not in randomness.js, which every page loads."""
    randomness = without_comments((WEB / "js" / "randomness.js").read_text())
    assert not re.search(r"\b(tapeSource|recordingSource)\b", randomness)
    for path in WEB.rglob("*.js"):
        code = without_comments(path.read_text())
        assert not re.search(r'(?:from|import\()\s*"[^"]*tapes\.js"', code), path
    assert "tapes.js" not in (WEB / "index.html").read_text()


def _static_closure(module: Path) -> set[Path]:
    """`module` and every page module it imports statically, transitively."""
    seen: set[Path] = set()
    todo = [module.resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        code = without_comments(path.read_text())
        todo.extend((path.parent / spec).resolve() for spec in re.findall(
            r'(?:^|\s)(?:import|export)\b[^;]*?from\s+"([^"]+)"', code, flags=re.M))
    return seen


# a two-server upload's modules: Prio3 and HPKE load at the respondent's first answer, after
# the questions are on screen (optional.js upload), and the loader names none of their files
UPLOAD_ENTRIES = {"twoServerUpload", "twoServerGrid"}


def test_the_loader_asks_for_an_optional_modules_imports_alongside_it():
    """Issue 40: a module the loader imports on demand whose static imports are not loaded by
    every page was asked for, and its imports only once it had arrived: one more round trip
    (150 ms under bench/bench_first_question.py's slow 4G; twoserver/verify.js's bytes.js for
    both two-server samples). optional.js ALONGSIDE names each such import, so it is asked for
    with the module."""
    optional = without_comments((WEB / "js" / "optional.js").read_text())
    imports = {name: (WEB / "js" / re.search(r'"\./([^"]+)"', value).group(1)).resolve()
               for name, value in _frozen_table(optional, "IMPORTS").items()}
    alongside = {name: re.findall(r'"(\w+)"', value)
                 for name, value in _frozen_table(optional, "ALONGSIDE").items()}
    every_page = _static_closure(WEB / "js" / "app.js") | _static_closure(WEB / "js" / "where.js")
    for name, path in imports.items():
        if name in UPLOAD_ENTRIES:
            continue
        asked = {path}.union(*(_static_closure(imports[other])
                               for other in alongside.get(name, [])))
        missing = _static_closure(path) - every_page - asked
        assert not missing, (name, sorted(p.name for p in missing))
        assert set(alongside.get(name, [])) <= set(imports), name


def test_what_every_page_imports_statically_holds_nothing_only_sending_needs():
    """Issue 40: every module app.js and where.js import statically is a file the page asks
    for before its first question (about 25 ms each under bench/bench_first_question.py's slow
    4G). What only reviewing and sending need (optional.js SENDING, the review's skip words,
    a two-server upload) and what only they import (api.js, to send; Prio3 and HPKE) load once
    the questions are on screen, so none of them may be imported statically by those two.
    api.js was: where.js asked with it, and page.js named its errors, though the page the
    aggregator serves carries its survey (where.js imports it only to ask, now)."""
    optional = without_comments((WEB / "js" / "optional.js").read_text())
    imports = {name: (WEB / "js" / re.search(r'"\./([^"]+)"', value).group(1)).resolve()
               for name, value in _frozen_table(optional, "IMPORTS").items()}
    sending = re.search(r"const SENDING = Object\.freeze\(\[(.*?)\]\);", optional, flags=re.S)
    assert sending, "no SENDING list"
    later = {imports[name] for name in (*re.findall(r'"(\w+)"', sending.group(1)), "skipReview",
                                        "twoServerUpload")}
    later |= {(WEB / "js" / name).resolve() for name in ("api.js", "hpke.js")}
    later |= set((WEB / "js" / "prio3").resolve().glob("*.js"))
    assert {p.name for p in later} >= {"review.js", "outbox.js", "api.js", "upload.js",
                                       "vdaf.js"}
    every_page = _static_closure(WEB / "js" / "app.js") | _static_closure(WEB / "js" / "where.js")
    assert not every_page & later, sorted(p.name for p in every_page & later)
