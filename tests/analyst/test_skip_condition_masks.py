"""`simulate` evaluates skip conditions on whole chunks of respondents (analyst/simulate/skip.py
`condition_mask`); a respondent's device evaluates them one at a time (shared/conditions.py,
and the page its JS port). For every condition the language accepts the two must give the same
"asked" mask, or a simulation draws follow-ups for respondents the device would never ask.

The property test draws random small surveys (binary, categorical, ordinal questions with the
same and with different option lists, integers, a multiselect; some with special values),
random conditions over them (those the parser refuses are left out) and random answers (some
not asked), and compares the vectorized mask with shared/conditions.py respondent by
respondent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.simulate.skip import Column, condition_mask
from ldpsurvey.shared.conditions import ConditionError, Node, Operand, parse_condition
from ldpsurvey.shared.survey import Survey

SPECIAL = {"dk": "Don't know"}  # one label on several questions: two answers may both be it
LABELS = ("low", "mid", "high", "often")

# Question templates: ordinal ones with the same options (sev, mood) and with other options
# sharing labels (rank), so that `sev == rank` can hold and `sev == mood` compares labels.
TEMPLATES: list[dict[str, Any]] = [
    {"id": "used", "type": "binary"},
    {"id": "gate", "type": "binary", "special": SPECIAL},
    {"id": "freq", "type": "categorical", "options": ["low", "often", "high"]},
    {"id": "kind", "type": "categorical", "options": ["mid", "low"], "special": SPECIAL},
    {"id": "sev", "type": "ordinal", "options": ["low", "mid", "high"], "special": SPECIAL},
    {"id": "mood", "type": "ordinal", "options": ["low", "mid", "high"]},
    {"id": "rank", "type": "ordinal", "options": ["high", "low", "often"], "special": SPECIAL},
    {"id": "n", "type": "integer", "min": -2, "max": 3},
    {"id": "m", "type": "integer", "min": 0, "max": 4, "special": SPECIAL},
    {"id": "subs", "type": "multiselect", "options": ["a", "b", "c"]},
]


def _survey(templates: list[dict[str, Any]]) -> Survey:
    return Survey.from_dict({"id": "masks", "title": "masks", "version": 1, "questions": [
        {**t, "text": t["id"], "epsilon": 1.0} for t in templates]})


def _device_answer(q: Any, index: int, row: np.ndarray | None) -> Any:
    """What the respondent's device holds for a drawn answer index (a set row for a
    multiselect question): written out here, not taken from the simulation's own code."""
    if q.type == "multiselect":
        assert row is not None
        return [o for o, chosen in zip(q.options, row, strict=True) if chosen]
    regular = 2 if q.type == "binary" else (q.max - q.min + 1) if q.type == "integer" \
        else len(q.options)
    if index >= regular:
        return list(q.special.values())[index - regular]
    if q.type == "binary":
        return bool(index)
    if q.type == "integer":
        return q.min + index
    return q.options[index]


def _draw(survey: Survey, n: int, rng: np.random.Generator
          ) -> tuple[dict[str, Column], list[dict[str, Any]]]:
    """Random answers (special values included, a quarter not asked) as simulation columns
    and as the answers each device holds."""
    columns: dict[str, Column] = {}
    answers: list[dict[str, Any]] = [{} for _ in range(n)]
    for q in survey.questions:
        present = rng.random(n) < 0.75
        if q.type == "multiselect":
            values = rng.random((n, len(q.options))) < 0.4
        else:
            values = rng.integers(0, len(q.unit.values(q)) + len(q.special), size=n)
        columns[q.id] = Column(q, values, present)
        for i in np.flatnonzero(present):
            row = values[i] if q.type == "multiselect" else None
            answers[i][q.id] = _device_answer(q, int(values[i]) if row is None else 0, row)
    return columns, answers


def _quote(text: str) -> str:
    return f'"{text}"' if "'" in text else f"'{text}'"


class _Conditions:
    """Random conditions over a survey's questions, mostly well typed (the right side of a
    comparison usually of the left side's kind), with every production of the grammar."""

    def __init__(self, survey: Survey, rng: np.random.Generator) -> None:
        self.questions = list(survey.questions)
        self.rng = rng

    def pick(self, items: list[Any]) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def of_type(self, *types: str) -> list[Any]:
        return [q for q in self.questions if q.type in types]

    def literal(self, like: Any | None) -> str:
        """A literal, usually one that fits the question `like` (an option of it)."""
        if like is not None and self.rng.random() < 0.85:
            if like.type in ("categorical", "ordinal"):
                return _quote(self.pick(list(like.options)))
            if like.type == "binary":
                return self.pick(["true", "false"])
            if like.type == "integer":
                return str(int(self.rng.integers(like.min - 1, like.max + 2)))
        return self.pick([_quote(self.pick(list(LABELS))), str(int(self.rng.integers(-3, 6))),
                          "true", "false"])

    def operand(self, depth: int, like: Any | None = None) -> tuple[str, Any | None]:
        """(text, the question it reads as a value, if any)."""
        roll = self.rng.random()
        sets = self.of_type("multiselect")
        if like is not None and roll < 0.55:  # another answer of the same kind, or not
            same = self.of_type(like.type) if self.rng.random() < 0.7 else \
                self.of_type("categorical", "ordinal")
            same = [q for q in same if q.id != like.id] or [like]
            q = self.pick(same)
            return q.id, q
        if roll < 0.75:
            return self.literal(like), None
        if sets and roll < 0.82:
            return f"count_selected({self.pick(sets).id})", None
        if roll < 0.88 and depth < 3:
            return f"({self.condition(depth + 1)})", None
        q = self.pick([q for q in self.questions if q.type != "multiselect"])
        return q.id, q

    def comparison(self, depth: int) -> str:
        roll = self.rng.random()
        readable = [q for q in self.questions if q.type != "multiselect"]
        sets = self.of_type("multiselect")
        if roll < 0.08 and sets:
            q = self.pick(sets)
            return f"selected({q.id}, {_quote(self.pick(list(q.options)))})"
        if roll < 0.16:
            return f"answered({self.pick(self.questions).id})"
        if roll < 0.22:
            group = f"({self.condition(depth + 1)})" if depth < 3 else "(true)"
            return self.pick(["true", "false", self.pick(readable).id, group])
        if roll < 0.34:
            q = self.pick(readable)
            values = ", ".join(self.literal(q) for _ in range(int(self.rng.integers(1, 4))))
            return f"{q.id} {self.pick(['in', 'not in'])} [{values}]"
        left, like = self.operand(depth)
        op = self.pick(["==", "!=", "<", "<=", ">", ">="])
        right, _ = self.operand(depth, like)
        return f"{right} {op} {left}" if self.rng.random() < 0.2 else f"{left} {op} {right}"

    def condition(self, depth: int = 0) -> str:
        roll = self.rng.random()
        if depth < 3 and roll < 0.12:
            return f"not {self.condition(depth + 1)}"
        if depth < 3 and roll < 0.3:
            joiner = self.pick([" and ", " or "])
            return joiner.join(self.comparison(depth + 1)
                               for _ in range(int(self.rng.integers(2, 4))))
        return self.comparison(depth)


def _kind(operand: Operand) -> str:
    """An operand's kind of value, for counting which combinations the test reached."""
    if operand.form == "ref":
        assert operand.question is not None
        return operand.question.type
    if operand.form == "literal":
        return f"literal {operand.kind}"
    return operand.form


def _combinations(node: Node, seen: Counter[str], special: frozenset[str]) -> None:
    """Count the node's combinations of operands into `seen` (`special`: the ids of the
    questions that offer special values)."""
    seen[node.form] += 1
    for item in node.items:
        _combinations(item, seen, special)
    for operand in (node.left, node.right):
        if operand is not None and operand.inner is not None:
            _combinations(operand.inner, seen, special)
    if node.form == "compare":
        assert node.left is not None and node.right is not None
        pair = sorted([_kind(node.left), _kind(node.right)])
        kind = "ordered" if node.op in ("<", "<=", ">", ">=") else "equality"
        seen[f"{kind} {pair[0]} ~ {pair[1]}"] += 1
        if pair == ["ordinal", "ordinal"]:
            same = node.left.question.options == node.right.question.options  # type: ignore
            seen[f"{kind} ordinal ~ ordinal, {'same' if same else 'different'} options"] += 1
    if node.form in ("in", "bare"):
        assert node.left is not None
        seen[f"{node.form} {_kind(node.left)}"] += 1
        if node.left.question is not None and node.left.question.id in special:
            seen[f"{node.form} {_kind(node.left)} with special values"] += 1


def test_vectorized_masks_equal_the_device_evaluation_for_random_surveys_and_conditions(
) -> None:
    """For 40 random surveys, 60 parsed conditions each, 150 respondents: the mask is the
    device's, respondent by respondent; and the conditions reached every combination of
    operands the language accepts (else the property would be checked on too little)."""
    rng = np.random.default_rng(20261206)
    seen: Counter[str] = Counter()
    for _ in range(40):
        count = int(rng.integers(3, len(TEMPLATES) + 1))
        chosen = sorted(rng.choice(len(TEMPLATES), size=count, replace=False))
        survey = _survey([TEMPLATES[i] for i in chosen])
        columns, answers = _draw(survey, 150, rng)
        generator = _Conditions(survey, rng)
        special = frozenset(q.id for q in survey.questions if q.special)
        parsed = 0
        for _ in range(2000):
            text = generator.condition()
            try:
                condition = parse_condition(text, survey.questions, len(survey.questions))
            except ConditionError:
                continue
            _combinations(condition.tree, seen, special)
            mask = condition_mask(condition.tree, columns, len(answers))
            expected = [condition.evaluate(a) for a in answers]
            assert mask.tolist() == expected, (text, [t["id"] for t in
                                                      (TEMPLATES[i] for i in chosen)])
            parsed += 1
            if parsed == 60:
                break
    for combination in ("equality ordinal ~ ordinal, same options",
                        "equality ordinal ~ ordinal, different options",
                        "ordered ordinal ~ ordinal, same options",
                        "equality categorical ~ ordinal", "equality categorical ~ categorical",
                        "equality literal text ~ ordinal", "ordered literal text ~ ordinal",
                        "equality categorical ~ literal text", "equality integer ~ integer",
                        "ordered integer ~ integer", "ordered integer ~ literal int",
                        "equality binary ~ binary", "equality binary ~ literal bool",
                        "ordered count ~ literal int", "equality group ~ literal bool",
                        "in ordinal", "in categorical", "in integer", "in binary",
                        "bare binary", "bare binary with special values", "bare selected",
                        "bare answered", "bare group",
                        "and", "or", "not"):
        assert seen[combination] > 0, (combination, sorted(seen))


def test_simulate_a_condition_comparing_an_ordinal_answer_with_a_categorical_one(
        tmp_path: Path) -> None:
    """`sev == freq` (an ordinal and a categorical answer, labels compared) is a condition the
    language accepts: simulate draws the follow-up for those whose labels agree. It crashed
    comparing ordinal positions with categorical labels (TypeError on `<`)."""
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"id": "mixed", "title": "mixed", "version": 1, "questions": [
        {"id": "sev", "text": "How bad?", "type": "ordinal", "epsilon": 1.0,
         "options": ["low", "mid", "high"]},
        {"id": "freq", "text": "How often?", "type": "categorical", "epsilon": 1.0,
         "options": ["low", "often", "high"]},
        {"id": "same", "text": "Same word?", "type": "binary", "epsilon": 1.0,
         "relevant": "sev == freq"}]}))
    out = CliRunner().invoke(cli, ["simulate", str(path), "--n", "3000", "--seed", "2"])
    assert out.exit_code == 0, out.output
    assert "among those asked:" in out.output


def test_a_bare_yes_no_question_holds_for_yes_only_not_for_a_special_value() -> None:
    """`gate` alone means "answered yes": false for no, for "Don't know" (a special value's
    label, an answer but not a yes: XLSForm's `${gate} = 'yes'` is false for a dk choice) and
    for those not asked; as the device reads it. The mask read the label as true."""
    survey = _survey([TEMPLATES[1], TEMPLATES[7]])  # gate (yes/no with "Don't know"), n
    gate = survey.question("gate")
    values = np.array([0, 1, 2, 1, 2])  # no, yes, Don't know, yes (not asked), Don't know
    present = np.array([True, True, True, False, True])
    columns = {"gate": Column(gate, values, present),
               "n": Column(survey.question("n"), np.zeros(5, dtype=np.int64),
                           np.ones(5, dtype=bool))}
    expected = {"gate": [False, True, False, False, False],
                "not gate": [True, False, True, True, True],
                "(gate) == true": [False, True, False, False, False],
                "gate or n > 0": [False, True, False, False, False]}
    for text, truth in expected.items():
        condition = parse_condition(text, survey.questions, 2)
        assert condition_mask(condition.tree, columns, 5).tolist() == truth, text
