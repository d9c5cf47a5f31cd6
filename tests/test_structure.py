"""The structure holds the line (issue 40): no new import circle, no more type switches.

The known circles below are the ones main had when this ratchet was written (10 in Python,
1 in the page; issue 40 counts 11). A new circle, or a known one that grew, fails; a known one
that is gone fails too until it is crossed off here, so the list only ever shrinks. The switch
ceilings are the counts measured by tests/support/structure.py on that main; a change that
adds a switch on a question's type must ask the question's unit instead, and a change that
removes switches lowers the ceiling. bench/bench_structure.py prints the numbers.
"""

from __future__ import annotations

from support.structure import (
    QUESTION_TYPES,
    import_circles,
    name_switches_in,
    page_import_graph,
    page_switches,
    python_import_graph,
    switch_counts,
)

KNOWN_PYTHON_CIRCLES: list[set[str]] = []
# analyst.reports.model / design_view / language is gone: model.py imports none of the view
# modules (a row's text in a language is model.shown_row; the table columns are columns.py).
# The page's one circle (js/mechanisms.js, js/optional.js, js/skip_logic.js) is gone: the loader
# holds which module a mechanism's core is in and imports none of the modules it loads.
KNOWN_PAGE_CIRCLES: list[set[str]] = []
# The one server package the helper may import (issue 40: the home both servers share).
COMMON = "server.common"
# Ceilings: the counts on main at 1d941c0 as tests/support/structure.py measures them (220,
# 222, 84), raised once by 9 for issue 39's port of the page's review and receipt words to the
# CLI, lowered by 5 when the consistency rules moved into shared/estimand.py, and lowered as
# each path asks the question-type units (shared/question_types) instead of switching on the
# type's name; switches inside the units and their registry are not counted. The page's: 84 ->
# 2 once each question type became a page module (client/web/js/types/); the two left compare
# a message node's and a checkbox's `type`, not a question's. The counter then learnt every
# spelling (a name anywhere in a tuple, `!=`, the name first, a module-level tuple, match/case,
# a dict looked up in place, a conditional picking a name, "decimal" and "disclosed"; the page:
# `kind === "ordinal"` too), which found 17, 14 and 9 on main at 746ab49; all but the page's two
# were asked of the units, the mechanisms and the definition instead (fix/switches).
MAX_PYTHON_NAME_SWITCHES = 0
MAX_PYTHON_TYPE_COMPARISONS = 0
MAX_PAGE_TYPE_COMPARISONS = 2


def _check(found: list[frozenset[str]], known: list[set[str]], where: str) -> None:
    new = [sorted(c) for c in found if not any(c <= k for k in known)]
    assert not new, f"new import circle(s) in {where}: {new}; import a unit, not a sibling"
    gone = [sorted(k) for k in known if not any(c & k for c in found)]
    assert not gone, f"circle(s) gone in {where}: cross them off this test's list: {gone}"


def test_no_new_python_import_circle() -> None:
    _check(import_circles(python_import_graph()), KNOWN_PYTHON_CIRCLES, "Python")


def test_no_new_page_import_circle() -> None:
    _check(import_circles(page_import_graph()), KNOWN_PAGE_CIRCLES, "the page")


def test_the_circle_finder_finds_a_circle_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_circles(graph) == [frozenset({"a", "b", "c"})]


def test_the_helper_reaches_the_server_only_through_its_common_package() -> None:
    """helper/ imports from server/ only server.common (the HTTP edge, the two-server tables,
    the helper token), and nothing it reaches that way imports the rest of server/."""
    graph = python_import_graph()
    reached: set[str] = set()
    todo = [name for name in graph if name == "helper" or name.startswith("helper.")]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(graph[name])
    outside = sorted(name for name in reached if (name == "server" or name.startswith("server."))
                     and not (name == COMMON or name.startswith(COMMON + ".")))
    assert not outside, f"helper/ reaches into server/ outside {COMMON}: {outside}"
    assert COMMON in reached or any(name.startswith(COMMON + ".") for name in reached)


def test_no_more_switches_on_a_question_type() -> None:
    counts = switch_counts()
    assert counts.python_name_switches <= MAX_PYTHON_NAME_SWITCHES, counts
    assert counts.python_type_comparisons <= MAX_PYTHON_TYPE_COMPARISONS, counts
    assert counts.page_type_comparisons <= MAX_PAGE_TYPE_COMPARISONS, counts


SPELLINGS = """
match q.type:
    case "binary": pass
    case "x" | "ordinal": pass
a = {"integer": 1}.get(t)
b = {"integer": 1}[t]
c = "disclosed" == m
d = x in ("a", "multiselect")
e = x.startswith("location")
f = "binary" if k else "categorical"
KINDS = ("text", "decimal")
g = y not in KINDS
h = y != "ordinal"
i = y in frozenset({"a", "binary"})
TABLE = {"binary": 1}
j = TABLE.get(y)
k = {"question_types": frozenset({"binary"})}
m = data.get("disclosed")
n = y == "grr"
"""


def test_the_switch_counter_finds_every_spelling_and_no_data() -> None:
    """Each spelling of a comparison with a type's name (or "disclosed") counts once; a name
    in data (a module-level dict, a set declared, a key read) does not."""
    assert name_switches_in(SPELLINGS) == [3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14]


def test_the_page_counter_finds_every_spelling() -> None:
    page = """
    if (q.type === "binary") a();
    if (operand.kind === "ordinal" || "integer" !== kind) b();
    switch (x) { case "decimal": c(); }
    if (["categorical", "ordinal"].includes(k)) d();
    if (box.type !== "checkbox") e();
    const ok = n <= 3 && f => f.name === "grr";
    """
    assert page_switches(page) == 6


def test_the_counter_knows_every_registered_type() -> None:
    from ldpsurvey.shared.question_types import QUESTION_TYPES as REGISTERED

    assert set(QUESTION_TYPES) == set(REGISTERED)


def test_analyst_top_level_holds_at_most_15_modules() -> None:
    """analyst/ is packages by role (plan, simulate, design, commands, reports, demo, ...):
    a new top-level sibling goes into the package of what it does (issue 40: at most 15)."""
    from support.structure import ROOT

    top = sorted(p.name for p in (ROOT / "analyst").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 15, f"analyst/ has {len(top)} top-level modules: {top}"
