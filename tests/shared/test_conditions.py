"""Skip-logic conditions (shared/conditions.py): the grammar, type checks and missing-value rules
of contract 3, checked against hand-written truths (the page's port is held to the same results
by tests/web/test_condition_vectors.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.shared.conditions import MAX_DEPTH, ConditionError, parse_condition

QUESTIONS = [
    {"id": "used", "type": "binary"},
    {"id": "freq", "type": "categorical", "options": ["rarely", "often", "daily"]},
    {"id": "sev", "type": "ordinal", "options": ["low", "mid", "high"]},
    {"id": "n", "type": "integer"},
    {"id": "subs", "type": "multiselect", "options": ["cannabis", "cocaine"]},
    {"id": "x", "type": "binary"},
    {"id": "later", "type": "binary"},
]
AT = 5


def holds(text: str, **answers: object) -> bool:
    return parse_condition(text, QUESTIONS, AT).evaluate(answers)


def refused(text: str) -> ConditionError:
    with pytest.raises(ConditionError) as info:
        parse_condition(text, QUESTIONS, AT)
    return info.value


@pytest.mark.parametrize(("text", "answers", "expected"), [
    ("used", {"used": True}, True),
    ("used", {"used": False}, False),
    ("not used", {"used": False}, True),
    ("freq == 'often'", {"freq": "often"}, True),
    ("freq in ['rarely', 'daily']", {"freq": "often"}, False),
    ("freq not in ['rarely', 'daily']", {"freq": "often"}, True),
    ("sev >= 'mid'", {"sev": "high"}, True),   # by option position, not alphabetically
    ("sev > 'low'", {"sev": "mid"}, True),
    ("sev < 'mid'", {"sev": "high"}, False),
    ("n > 3", {"n": 4}, True),
    ("n <= -2", {"n": -2}, True),
    ("selected(subs, 'cocaine')", {"subs": ["cocaine"]}, True),
    ("count_selected(subs) == 2", {"subs": ["cannabis", "cocaine"]}, True),
    ("used and n > 3 or freq == 'daily'", {"used": False, "n": 9, "freq": "daily"}, True),
    ("used and (n > 3 or freq == 'daily')", {"used": False, "n": 9, "freq": "daily"}, False),
    ("not used and n > 3", {"used": False, "n": 4}, True),  # not binds tighter than and
])
def test_conditions_mean_what_they_say(text: str, answers: dict, expected: bool) -> None:
    assert holds(text, **answers) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("used", False), ("not used", True), ("used == true", False), ("used != true", True),
    ("freq == 'often'", False), ("freq != 'often'", True), ("freq in ['often']", False),
    ("freq not in ['often']", True), ("sev < 'high'", False), ("sev >= 'low'", False),
    ("n > 0", False), ("n < 0", False), ("n == 0", False), ("n != 0", True),
    ("selected(subs, 'cannabis')", False), ("not selected(subs, 'cannabis')", True),
    ("count_selected(subs) == 0", True), ("count_selected(subs) < 1", True),
])
def test_a_question_not_asked_is_false_except_for_not_equal_and_not_in(
        text: str, expected: bool) -> None:
    """Contract 3 (XLSForm's empty value): absent or None, only != and not in hold, and
    count_selected() is 0."""
    assert holds(text) is expected
    assert parse_condition(text, QUESTIONS, AT).evaluate(
        {"used": None, "freq": None, "sev": None, "n": None, "subs": None}) is expected


@pytest.mark.parametrize(("answers", "expected"), [
    ({}, False),                         # not asked (absent)
    ({"n": None}, False),                # asked and skipped (an optional question)
    ({"n": 0}, True), ({"n": -3}, True),  # any answer, a falsy one too
    ({"n": "Don't know"}, True),         # a special value is an answer
])
def test_answered_tells_an_answer_from_none(answers: dict, expected: bool) -> None:
    """answered(q) is the one test of whether q holds an answer: what `!=` cannot tell
    (`n != 0` holds both for n = 1 and for n skipped)."""
    assert holds("answered(n)", **answers) is expected
    assert holds("not answered(n)", **answers) is (not expected)
    assert holds("answered(n) == true", **answers) is expected


@pytest.mark.parametrize("special", ["Don't know", "Prefer not to say"])
@pytest.mark.parametrize(("text", "expected"), [
    ("used", False), ("(used)", False), ("not used", True), ("not not used", False),
    ("used == true", False), ("used == false", False), ("used != true", True),
    ("used or n > 3", False), ("not used and n == 1", True), ("(used) == true", False),
    ("answered(used)", True),
])
def test_a_yes_no_question_answered_with_a_special_value_is_not_yes(
        special: str, text: str, expected: bool) -> None:
    """A bare yes/no question means "answered yes": a special value (its label, a non-empty
    string) is an answer but not a yes, so `used` agrees with `used == true`, as XLSForm's
    `${used} = 'yes'` is false for a dk choice. It was read as Python's bool(label): true."""
    assert holds(text, used=special, n=1) is expected


def test_answered_reads_every_kind_of_question_a_condition_reads() -> None:
    assert holds("answered(used)", used=False)
    assert holds("answered(freq) and answered(sev)", freq="often", sev="low")
    assert holds("answered(subs)", subs=[])  # no option ticked is an answer, a skip is not
    assert not holds("answered(subs)", subs=None)
    # XLSForm's `${a} != ${b}` where both may be skipped: two empty answers are equal there
    either = "n != n2 and (answered(n) or answered(n2))"
    questions = [*QUESTIONS[:4], {"id": "n2", "type": "integer"}, QUESTIONS[5]]
    condition = parse_condition(either, questions, 5)
    assert [condition.evaluate(a) for a in ({}, {"n": 1}, {"n": 1, "n2": 1},
                                            {"n": 1, "n2": 2})] == [False, True, False, True]
    assert condition.references == ("n", "n2")


def test_references_are_the_earlier_questions_read_in_order() -> None:
    condition = parse_condition("n > 1 and (used or selected(subs, 'cocaine')) and n < 9",
                                QUESTIONS, AT)
    assert condition.references == ("n", "used", "subs")


@pytest.mark.parametrize(("text", "kind", "position", "words"), [
    ("later", "reference", 0, "comes later"),
    ("used and x", "reference", 9, "this question itself"),
    ("nope == 1", "reference", 0, 'no question "nope"'),
    ("used = true", "syntax", 5, 'use "=="'),
    ("freq == 'never'", "type", 8, '"never" is not an option of "freq"'),
    ("freq == 'Often'", "type", 8, '"Often" is not an option of "freq": did you mean "often"?'),
    ("selected(subs, 'Cannabis')", "type", 15, 'did you mean "cannabis"?'),
    ("used == 'yes'", "type", 5, '"used" is yes/no: write used (or used == true) or '
                                 'used == false'),
    ("freq < 'often'", "type", 5, "orders numbers"),
    ("used == 1", "type", 5, "a yes/no value with a number"),
    ("n", "type", 0, "not a yes/no condition"),
    ("subs == 'cocaine'", "type", 0, "selected(subs"),
    ("selected(used, 'x')", "type", 9, "reads a multiselect question"),
    ("n in [1, 'a']", "type", 9, '"in" compares a number with text'),
    # an ordinal question's answer is text ordered by its options, named so in errors
    ("sev == 1", "type", 4, '"==" compares an ordinal answer with a number'),
    ("n != sev", "type", 2, '"!=" compares a number with an ordinal answer'),
    ("sev in [true]", "type", 8, '"in" compares an ordinal answer with a yes/no value'),
    ("sev >= freq", "type", 4, "orders numbers, or an ordinal question"),
    ("used and answered(later)", "reference", 18, "comes later"),
    ("answered(x)", "reference", 9, "this question itself"),
    ("answered(nope)", "reference", 9, 'no question "nope"'),
    ("answered(n) == 1", "type", 12, "a yes/no value with a number"),
    ("answered(n, 'x')", "syntax", 10, 'expected ")"'),
    ("answered('n')", "syntax", 9, "expected a question id"),
    ("answer(n)", "syntax", 0, "selected, count_selected and answered"),
    ("(used", "syntax", 5, 'expected ")"'),
    ("n == 1 == 1", "syntax", 7, 'unexpected "=="'),
    ("n > 9007199254740992", "syntax", 4, "too large"),
    ("freq == 'often", "syntax", 8, "no closing quote"),
])
def test_errors_name_their_kind_and_place(text: str, kind: str, position: int,
                                          words: str) -> None:
    error = refused(text)
    assert (error.kind, error.position) == (kind, position)
    assert words in error.message


def test_nesting_is_bounded_on_both_sides_of_the_limit() -> None:
    assert holds("(" * MAX_DEPTH + "used" + ")" * MAX_DEPTH, used=True)
    assert holds("not " * MAX_DEPTH + "used", used=True) is (MAX_DEPTH % 2 == 0)
    assert refused("(" * (MAX_DEPTH + 1) + "used" + ")" * (MAX_DEPTH + 1)).kind == "syntax"
    assert refused("not " * (MAX_DEPTH + 1) + "used").position == 4 * (MAX_DEPTH + 1)


def test_positions_count_code_points() -> None:
    questions = [{"id": "e", "type": "categorical", "options": ["🙂 fine", "bad"]},
                 {"id": "x", "type": "binary"}]
    with pytest.raises(ConditionError) as info:
        parse_condition("e == '🙂 fine' and @", questions, 1)
    assert info.value.position == len("e == '🙂 fine' and ")  # Python counts code points


ALPHABET = st.sampled_from(["used", "freq", "sev", "n", "subs", "x", "later", "and", "or",
                            "not", "in", "==", "!=", "<", ">=", "=", "!", "(", ")", "[", "]",
                            ",", "'often'", '"mid"', "1", "-3", "true", "false", "selected",
                            "count_selected", "answered", " ", "@", "'", "é"])


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=14), st.fixed_dictionaries({
    "used": st.none() | st.booleans(), "freq": st.none() | st.sampled_from(["rarely", "often"]),
    "sev": st.none() | st.sampled_from(["low", "mid", "high"]),
    "n": st.none() | st.integers(-5, 5),
    "subs": st.none() | st.lists(st.sampled_from(["cannabis", "cocaine"]), unique=True)}))
def test_any_text_parses_or_is_refused_and_evaluation_never_fails(
        tokens: list[str], answers: dict) -> None:
    text = " ".join(tokens)
    try:
        condition = parse_condition(text, QUESTIONS, AT)
    except ConditionError as exc:
        assert exc.kind in ("syntax", "reference", "type")
        assert 0 <= exc.position <= len(text)
        return
    assert condition.evaluate(answers) in (True, False)
