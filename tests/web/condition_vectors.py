"""Shared vectors for skip-logic conditions: shared/conditions.py and client/web/js/conditions.js
must give, for each expression, the same references or the same error (kind, position and
message), and for each answer set the same truth value.

The expressions are written here by hand (every production of the grammar, every error path,
every missing-value rule, code points beyond the BMP); the expected results are what the Python
parser gives, which tests/shared/test_conditions.py checks against hand-written truths.
`build_condition_vectors()` returns them as JSON-safe data.
"""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.conditions import ConditionError, parse_condition

QUESTIONS: list[dict[str, Any]] = [
    {"id": "used", "type": "binary"},
    {"id": "freq", "type": "categorical", "options": ["rarely", "often", "it's daily"]},
    {"id": "sev", "type": "ordinal", "options": ["low", "mid", "high"]},
    {"id": "n", "type": "integer"},
    {"id": "subs", "type": "multiselect", "options": ["cannabis", "cocaine", 'say "x"']},
    {"id": "home", "type": "location"},
    {"id": "q.2-b", "type": "binary"},
    {"id": "2b", "type": "integer"},
    {"id": "mood", "type": "ordinal", "options": ["low", "mid", "high"]},
    {"id": "emoji", "type": "categorical", "options": ["🙂 fine", "😞 bad"]},
    {"id": "x", "type": "binary"},      # the question the conditions belong to
    {"id": "later", "type": "integer"},
]
AT = 10

EXPRESSIONS = [
    # valid: every production
    "used", "not used", "used == true", "used != false", "true", "false", "used == false",
    "(used) == true", "used != q.2-b", "not (used or q.2-b)",
    "freq == 'often'", 'freq == "it\'s daily"', "freq != 'rarely'", "'often' == freq",
    "freq in ['rarely', 'often']", "freq not in ['rarely']", "sev >= 'mid'", "'mid' < sev",
    "sev < mood", "sev == mood", "sev in ['low', 'high']", "n > 3", "n <= -2", "3 < n",
    "n == 2b", "n in [1, 2, 3]", "n not in [0]", "selected(subs, 'cocaine')",
    "not selected(subs, 'cannabis')", "selected(subs, 'say \"x\"')", "count_selected(subs) >= 2",
    "count_selected(subs) == 0", "used and n > 3 or freq == 'often'",
    "used and (n > 3 or freq == 'often')", "not not used", "(used)", "((used))",
    "used and q.2-b", "q.2-b or 2b > 0", "emoji == '😞 bad' and used", "emoji in ['🙂 fine']",
    "(used == true) == (n > 1)", "1 == 1", "'a' != 'b'", "true in [true]",
    "  used\tand\n\rn>3  ", "n>=-1", "used==true", "n == -0", "n < 9007199254740991",
    "n > -9007199254740991", "(n > 1) != used", "used or used or used and used",
    "not (used and not q.2-b)", "sev > 'low' and sev < 'high'", "n in [007]",
    # two answers compared (an XLSForm `${a} != ${b}`): a side not asked makes == false and
    # != true, as against a value; the import adds "either was answered" where XPath needs it
    "n != 2b", "n < 2b", "2b >= n", "used == q.2-b", "used != q.2-b", "sev != mood",
    "n != 2b and (used or q.2-b)", "n == 2b or not (used or q.2-b)", "freq == freq",
    # answered(q): asked and answered (a special value, an empty multiselect too), the import's
    # "either was answered" for optional questions
    "answered(n)", "not answered(n)", "answered(used)", "answered(subs)", "answered(q.2-b)",
    "answered(emoji) and emoji != '🙂 fine'", "answered(n) == true", "answered(2b) != answered(n)",
    "n != 2b and (answered(n) or answered(2b))", "n == 2b or not (answered(n) or answered(2b))",
    "answered(mood) and not answered(emoji)", "answered( freq )", "(answered(n))",
    # a sum of XLSForm indicators written without arithmetic (`(if(C1, 1, 0) + ...) >= 1`,
    # `= 0`, `= n`, `< n`; `if(C, 0, 1)` is `not C`): selected() and comparisons of questions
    # not asked or not answered are false in each term, as in XPath
    "selected(subs, 'cocaine') or freq == 'often' or used == true",
    "not (selected(subs, 'cocaine') or freq == 'often' or used == true)",
    "selected(subs, 'cocaine') and freq == 'often' and used == true",
    "not (selected(subs, 'cocaine') and not freq == 'often')",
    # syntax errors
    "", "   ", "used =", "used = true", "n ! 3", "!used", "used ==", "used and", "and used",
    "(used", "used)", "n in 3", "n in [", "n in [1,", "n in [1 2]", "n in []", "n in [n]",
    "freq == 'often", "freq == \"often'", "n > 1.5", "n > - 3", "n > -x", "n > --3",
    "n > 9007199254740992", "n > -99999999999999999999", "used & n", "used && n", "used || n",
    "used @", "used not used", "used not", "n == 3 == 3", "used used", "foo(used)",
    "selected(subs)", "selected(subs 'x')", "selected('subs', 'x')", "selected(subs, x)",
    "count_selected(subs, 'x')", "count_selected()", "selected subs", "selected",
    "answered()", "answered(n", "answered(n, 'x')", "answered('n')", "answered n", "answer(n)",
    "answered(n) and @",
    "( )", "[1]", "n in (1, 2)", "emoji == '🙂 fine' and @", "'🙂' @",
    "not " * 33 + "used", "(" * 33 + "used" + ")" * 33, "not " * 32 + "used",
    "(" * 32 + "used" + ")" * 32, "(" * 16 + "not " * 16 + "used" + ")" * 16,
    "(" * 17 + "not " * 16 + "used" + ")" * 17,
    # reference errors
    "nope", "nope == 1", "x", "later > 1", "used and later > 1", "selected(nope, 'x')",
    "count_selected(later)", "True", "freq == nope",
    "answered(later)", "answered(x)", "answered(nope)", "used or answered(Used)",
    # type errors
    "n", "freq", "sev", "n == true", "used == 1", "freq == 1", "freq == 'never'",
    "'never' == freq", "freq < 'often'", "sev < 'never'", "sev < 1", "n < 'a'", "used < true",
    "sev < freq", "freq in ['often', 'never']", "freq in [1]", "n in ['a']", "used in [1]",
    "subs", "subs == 'x'", "count_selected(subs)", "selected(used, 'x')",
    "count_selected(n) > 1", "selected(subs, 'heroin')", "home", "home == 'x'", "1",
    "'text'", "(n)", "not n", "n and used", "used or freq", "emoji == '🙂'", "2b",
    "emoji == '🙂 fine' and n", "not (n > 1) == 1",
    "answered(home)", "answered(n) == 1", "answered(n) > false", "answered(n) in [1]",
    "n == answered(2b)", "sev == 1", "n != sev", "sev in [true]", "mood == used",
    "sev >= freq", "'high' > sev", "freq in ['low']", "sev in ['often']",
    # hints: an option that differs only by case, a yes/no question compared with text
    "freq == 'Often'", "sev >= 'MID'", "freq in ['often', 'RARELY']", "selected(subs, 'Cocaine')",
    "used == 'yes'", "'no' != used", "used in ['yes']",
]

ANSWER_SETS: list[dict[str, Any]] = [
    {},
    {"used": True, "freq": "often", "sev": "mid", "n": 4, "subs": ["cocaine", 'say "x"'],
     "q.2-b": False, "2b": 4, "mood": "high", "emoji": "😞 bad"},
    {"used": False, "freq": "rarely", "sev": "low", "n": -2, "subs": [], "q.2-b": True,
     "2b": 0, "mood": "low", "emoji": "🙂 fine"},
    {"used": True, "freq": "it's daily", "sev": "high", "n": 0, "subs": ["cannabis"],
     "mood": "high"},
    {"used": None, "freq": None, "n": None, "subs": None, "2b": 1},
    {"used": False, "n": 9007199254740991, "sev": "high", "mood": "mid", "subs": ["cannabis",
                                                                                  "cocaine"]},
    # special values (don't know, prefer not to say: their labels): read by == != in, no order
    {"used": True, "n": "Don't know", "2b": 3, "sev": "Don't know", "mood": "low",
     "freq": "Prefer not to say"},
    {"n": 2, "2b": "Don't know", "sev": "mid", "mood": "Don't know"},
    # a yes/no question's special value: an answer, not a yes (a bare `used` is false)
    {"used": "Don't know", "q.2-b": "Prefer not to say", "n": 4, "freq": "often"},
    {"used": "Prefer not to say", "q.2-b": True, "subs": ["cocaine"]},
]


def build_condition_vectors() -> dict[str, Any]:
    """{"questions", "at", "answer_sets", "cases"}: each case the expression and either its
    references and truth value per answer set, or its error."""
    cases = []
    for text in EXPRESSIONS:
        try:
            condition = parse_condition(text, QUESTIONS, AT)
        except ConditionError as exc:
            cases.append({"text": text, "error": {"kind": exc.kind, "position": exc.position,
                                                   "message": exc.message}})
            continue
        cases.append({"text": text, "references": list(condition.references),
                      "values": [condition.evaluate(answers) for answers in ANSWER_SETS]})
    return {"questions": QUESTIONS, "at": AT, "answer_sets": ANSWER_SETS, "cases": cases}
