"""The code's structure as numbers: import circles (Python and the page) and type switches.

Issue 40 sets targets on these (import circles 11 -> 0, switches on a question's type name
205 -> at most 15, ...). This module measures them from the source text alone, without
importing the package, so that a test can hold the line (no new circle) and bench/ can print
the progress. Every static import statement counts, those inside functions too: a function-level
import that closes a circle is a lazy edge written to dodge the circle at import time, and the
modules still depend on each other (the page: `import ... from`, not a dynamic `import()`).
``python_import_graph(module_level_only=True)`` gives the import-time graph alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROLE_FOLDERS = ("shared", "client", "server", "helper", "analyst")
QUESTION_TYPES = ("binary", "categorical", "ordinal", "integer", "multiselect", "location",
                  "decimal")
# What a switch on a question's type compares with: a type's name, or "disclosed" (a property
# of a question every unit handles, asked as `question.disclosed`, not a name to compare).
SWITCH_NAMES = frozenset({*QUESTION_TYPES, "disclosed"})
# Where a type may be named: its unit and the registry (Python and the page). Switches are
# counted everywhere else.
UNIT_FOLDERS = ("shared/question_types", "client/web/js/types")


def _in_units(path: Path, root: Path) -> bool:
    rel = path.relative_to(root).as_posix()
    return any(rel.startswith(folder + "/") for folder in UNIT_FOLDERS)


def python_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the role folders, keyed by its dotted name (``shared.survey``)."""
    modules: dict[str, Path] = {}
    for folder in ROLE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute dotted name of a relative import (``from ..x import y`` in ``module``)."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *(target.split(".") if target else [])])


def python_import_graph(root: Path = ROOT, *,
                        module_level_only: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports (at module level only, if asked)."""
    modules = python_modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        nodes = (_top_level_imports(tree.body) if module_level_only else
                 (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)))
        for node in nodes:
            targets = _targets(node, name, is_package)
            if isinstance(node, ast.ImportFrom) and all(
                    t.removeprefix("ldpsurvey.") in modules for t in targets[1:]):
                targets = targets[1:]  # `from . import sub`: the submodules, not the package
            for target in targets:
                target = target.removeprefix("ldpsurvey.")
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _top_level_imports(body: list[ast.stmt]) -> Iterable[ast.Import | ast.ImportFrom]:
    """Imports run when the module is imported: the body, its if/try blocks, not functions."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if _is_type_checking(node.test):
                continue
            yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody,
                          *(h.body for h in node.handlers)):
                yield from _top_level_imports(block)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        base = _resolve(module, is_package, node.level, node.module)
    # `from . import x` imports the submodule x when there is one: count both.
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


_JS_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']""",
                        re.MULTILINE)
_JS_BARE_IMPORT = re.compile(r"""^\s*import\s*["']([^"']+)["']""", re.MULTILINE)


def page_import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Page module -> the page modules it imports statically (``import ... from "./x.js"``)."""
    web = root / "client" / "web"
    files = sorted(web.rglob("*.js"))
    graph: dict[str, set[str]] = {str(f.relative_to(web)): set() for f in files}
    for path in files:
        text = path.read_text(encoding="utf-8")
        for spec in [*_JS_IMPORT.findall(text), *_JS_BARE_IMPORT.findall(text)]:
            if not spec.startswith("."):
                continue
            target = (path.parent / spec).resolve()
            if target.is_file() and web in target.parents:
                graph[str(path.relative_to(web))].add(str(target.relative_to(web)))
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The graph's import circles: strongly connected components of more than one module
    (Tarjan's algorithm, iterative so that a deep graph cannot overflow the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(frozenset(component))
    return sorted(circles, key=lambda c: (-len(c), sorted(c)))


_TYPE_NAMES = "|".join(QUESTION_TYPES)
# A line's quick look for a comparison with a type's name, for the tests that read given paths
# line by line: `== "multiselect"`, `!= 'binary'`, `"integer" ==`, `in ("binary", ...` (the
# name first), `case` on a name. The counts use `name_switches` (the syntax tree: every
# spelling, the name anywhere in a tuple, "disclosed" too).
_PY_NAME_SWITCH = re.compile(
    rf"""(?:[=!]=\s*["'](?:{_TYPE_NAMES})["'])"""
    rf"""|(?:["'](?:{_TYPE_NAMES})["']\s*[=!]=)"""
    rf"""|(?:\bin\s*[(\[{{]\s*["'](?:{_TYPE_NAMES})["'])"""
    rf"""|(?:\bcase\s*["'](?:{_TYPE_NAMES})["'])""")
# Any comparison of something's `type` attribute or key, or isinstance on a question class:
# `q.type ==`, `["type"] in`, `isinstance(q, MultiselectQuestion)`.
_PY_TYPE_COMPARISON = re.compile(
    r"""(?:\.type\b|\[["']type["']\])\s*(?:[=!]=|\bin\b|\bnot\s+in\b)"""
    r"""|(?:[=!]=\s*[\w.]*\.type\b)"""
    r"""|isinstance\([^)]*Question\b""")


def name_switches(tree: ast.Module) -> list[int]:
    """The line of each comparison with a name of SWITCH_NAMES in a module, however spelled:
    `==`/`!=`/`in`/`not in` with the name on either side (`q.type == "binary"`,
    `"binary" == q.type`), the name anywhere in a tuple, list, set or dict compared with
    (`in ("text", "ordinal")`), or in a module-level tuple, list or set holding one
    (`in _KINDS`; a module-level dict is a table of data: ODK's bind type "binary" is a file);
    a `match` case on the name; `.startswith`/`.endswith` with it; a dict literal keyed by
    names looked up in place (`{"integer": ...}.get(q.type)`, `{...}[q.type]`); and a
    conditional expression that picks a name (`"binary" if k == 2 else "categorical"`).
    A name in data (a mechanism's `question_types`, a dict written out, a key read with
    `.get("disclosed")`) is no switch and is not counted."""
    constants: set[str] = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
        value = getattr(node, "value", None)
        if value is not None and not isinstance(value, ast.Dict) and _spells(value, set()):
            constants.update(t.id for t in targets if isinstance(t, ast.Name))
    return sorted(node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno
                  for node in ast.walk(tree) if _switches(node, constants))


def _switches(node: ast.AST, constants: set[str]) -> bool:
    """Whether this node is one of `name_switches`' spellings."""
    if isinstance(node, ast.Compare):
        return any(_spells(o, constants) for o in (node.left, *node.comparators))
    if isinstance(node, ast.match_case):
        return any(isinstance(p, ast.MatchValue) and _is_name(p.value)
                   for p in ast.walk(node.pattern))
    if isinstance(node, ast.IfExp):
        return _is_name(node.body) or _is_name(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("startswith", "endswith"):
            return bool(node.args) and _spells(node.args[0], set())
        return node.func.attr == "get" and _keyed_by_names(node.func.value)
    return isinstance(node, ast.Subscript) and _keyed_by_names(node.value)


def _keyed_by_names(node: ast.AST) -> bool:
    return isinstance(node, ast.Dict) and any(_is_name(k) for k in node.keys if k is not None)


def _is_name(node: ast.AST | None) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value in SWITCH_NAMES)


def _spells(node: ast.AST, constants: set[str]) -> bool:
    """Whether a compared operand is a name, a literal collection holding one anywhere (a
    `frozenset({...})` too), or a module-level constant bound to such a collection (not a
    dict)."""
    if _is_name(node):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_spells(e, set()) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(_is_name(k) for k in node.keys if k is not None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "frozenset", "set", "tuple", "list") and node.args:
        return _spells(node.args[0], set())
    return isinstance(node, ast.Name) and node.id in constants


_PAGE_NAMES = "|".join(sorted(SWITCH_NAMES))
_PAGE_QUOTED = rf"""["'`](?:{_PAGE_NAMES})["'`]"""
# A page comparison: `===`, `!==`, `==`, `!=` (not `<=`, `>=`, `=>`).
_JS_OPERATOR = re.compile(r"(?<![<>=!])[!=]==?(?![=>])")
_JS_LEFT = re.compile(rf"""(?:\.type|{_PAGE_QUOTED})\s*$""")
_JS_RIGHT = re.compile(rf"""^\s*(?:[\w.]*\.type\b|{_PAGE_QUOTED})""")
# `case "ordinal":`, `["binary", "ordinal"].includes(x)`, `.startsWith("integer")`.
_JS_NAME_SWITCH = re.compile(
    rf"""\bcase\s*{_PAGE_QUOTED}"""
    rf"""|\[[^\]\[]*{_PAGE_QUOTED}[^\]\[]*\]\s*\.includes\("""
    rf"""|\.(?:startsWith|endsWith)\(\s*{_PAGE_QUOTED}""")


def page_switches(text: str) -> int:
    """Comparisons of a `type`, or with a type's name (or "disclosed"), in a page module:
    `q.type === ...`, `kind === "ordinal"`, `"ordinal" === kind`, `case "ordinal":`, an
    array of names asked `.includes(...)`."""
    found = 0
    for line in text.splitlines():
        for op in _JS_OPERATOR.finditer(line):
            if _JS_LEFT.search(line[:op.start()]) or _JS_RIGHT.search(line[op.end():]):
                found += 1
        found += len(_JS_NAME_SWITCH.findall(line))
    return found


@dataclass(frozen=True)
class SwitchCounts:
    """How often the role folders decide by a question's type instead of asking it."""

    python_name_switches: int
    """Comparisons with a type's name or "disclosed", however spelled (`name_switches`)."""
    python_type_comparisons: int
    """Lines that compare with a type's name, compare a `type` attribute or key, or test
    isinstance on a question class."""
    page_type_comparisons: int
    """Comparisons of a `type`, or with a type's name, in the page's modules
    (`page_switches`)."""


def switch_counts(root: Path = ROOT) -> SwitchCounts:
    """Counts of type switches in the role folders' Python and the page's modules, outside
    the type units and their registry (UNIT_FOLDERS)."""
    name_switches = type_comparisons = 0
    for path in python_modules(root).values():
        if _in_units(path, root):
            continue
        text = path.read_text(encoding="utf-8")
        found = name_switches_in(text, str(path))
        name_switches += len(found)
        named = set(found)
        type_comparisons += sum(1 for number, line in enumerate(text.splitlines(), 1)
                                if number in named or _PY_TYPE_COMPARISON.search(line))
    page = sum(page_switches(p.read_text(encoding="utf-8"))
               for p in sorted((root / "client" / "web").rglob("*.js")) if not _in_units(p, root))
    return SwitchCounts(name_switches, type_comparisons, page)


def name_switches_in(text: str, filename: str = "<source>") -> list[int]:
    """`name_switches` of a module's source text."""
    return name_switches(ast.parse(text, filename=filename))


def switch_report(root: Path = ROOT) -> list[str]:
    """Each counted switch as `path:line: source`, Python then the page (what the counts
    count, for bench/bench_structure.py --list)."""
    found: list[str] = []
    for path in python_modules(root).values():
        if _in_units(path, root):
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        named = set(name_switches_in(text, str(path)))
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(lines, 1):
            if number in named or _PY_TYPE_COMPARISON.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    for path in sorted((root / "client" / "web").rglob("*.js")):
        if _in_units(path, root):
            continue
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if page_switches(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    return found
