"""Survey definitions: one test per validation error kind, canonical bytes, TOML/JSON loading."""

from __future__ import annotations

import copy
import importlib.resources
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.survey import Survey, load_survey


def base() -> dict[str, Any]:
    """A valid survey with one question of each main type."""
    return {
        "id": "habits",
        "title": "Habits",
        "version": 1,
        "questions": [
            {"id": "smoke", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
            {"id": "freq", "text": "How often?", "type": "categorical", "epsilon": 2.0,
             "options": ["never", "monthly", "weekly", "daily"],
             "groups": {"often": ["weekly", "daily"]}},
            {"id": "hours", "text": "Hours of sleep", "type": "integer", "epsilon": 1.5,
             "min": 0, "max": 16},
        ],
    }


def with_question(index: int, **changes: Any) -> dict[str, Any]:
    d = base()
    for key, value in changes.items():
        if value is _DELETE:
            del d["questions"][index][key]
        else:
            d["questions"][index][key] = value
    return d


_DELETE = object()


def expect_error(data: Any, field: str, problem: str = "") -> SurveyError:
    with pytest.raises(SurveyError) as info:
        Survey.from_dict(data)
    err = info.value
    assert err.field == field, err.message
    assert problem in err.problem, err.message
    assert field in err.message
    return err


def test_base_is_valid() -> None:
    survey = Survey.from_dict(base())
    assert [q.id for q in survey.questions] == ["smoke", "freq", "hours"]
    assert survey.total_epsilon == 4.5


# --- one test per kind of error ----------------------------------------------------------------


def test_unknown_type() -> None:
    expect_error(with_question(0, type="yesno"), "questions.smoke.type", "unknown type")


def test_fewer_than_two_options() -> None:
    expect_error(with_question(1, options=["only"], groups={}), "questions.freq.options",
                 "at least 2")


def test_duplicate_question_ids() -> None:
    d = base()
    d["questions"][2]["id"] = "smoke"
    expect_error(d, "questions.smoke.id", "questions[0] and questions[2] both use it")


@pytest.mark.parametrize("bad", [None, 7, "", "has space"])
def test_an_invalid_id_is_named_by_position(bad: Any) -> None:
    """Before its id parses, a question can only be named by its place in the list."""
    expect_error(with_question(1, id=bad), "questions[1].id", "letters, digits")


def test_errors_name_the_question_by_id_everywhere() -> None:
    """Contract 1: once the id is known, every error of the question says `questions.<id>`
    (the survey parser, the mechanisms, location and two-server keys alike)."""
    cases = [with_question(0, type="yesno"), with_question(1, epsilon=0),
             with_question(1, mechanism="geometric"), with_question(2, epsilon=60.0),
             with_question(0, central_epsilon=1.0)]
    for data in cases:
        with pytest.raises(SurveyError) as info:
            Survey.from_dict(data)
        assert re.match(r"questions\.(smoke|freq|hours)\.", info.value.field), info.value.message


def test_duplicate_labels() -> None:
    expect_error(with_question(1, options=["never", "daily", "never"], groups={}),
                 "questions.freq.options[2]", "duplicate label")


@pytest.mark.parametrize("epsilon", [0, 0.0, -1.0, math.nan, math.inf, -math.inf, True, "1.0",
                                     None, 10**7, 51.0])
def test_bad_epsilon(epsilon: Any) -> None:
    expect_error(with_question(0, epsilon=epsilon), "questions.smoke.epsilon")


def test_missing_epsilon() -> None:
    expect_error(with_question(0, epsilon=_DELETE), "questions.smoke.epsilon")


@pytest.mark.parametrize("lo, hi", [(5, 5), (6, 5)])
def test_min_not_below_max(lo: int, hi: int) -> None:
    expect_error(with_question(2, min=lo, max=hi), "questions.hours.min", "must be <")


@pytest.mark.parametrize("key, value", [("min", 1.5), ("max", True), ("max", "16")])
def test_non_integer_bounds(key: str, value: Any) -> None:
    expect_error(with_question(2, **{key: value}), f"questions.hours.{key}", "integer")


def test_mechanism_that_does_not_fit_the_type() -> None:
    expect_error(with_question(2, mechanism="grr"), "questions.hours.mechanism", "does not fit")
    expect_error(with_question(1, mechanism="geometric"), "questions.freq.mechanism",
                 "does not fit")


def test_unknown_mechanism() -> None:
    expect_error(with_question(0, mechanism="magic"), "questions.smoke.mechanism",
                 "unknown mechanism")


def test_unknown_key_at_survey_level() -> None:
    d = base()
    d["owner"] = "me"
    expect_error(d, "survey.owner", "unknown key")


def test_unknown_key_at_question_level() -> None:
    expect_error(with_question(0, colour="red"), "questions.smoke.colour", "unknown key")


def test_key_of_another_type_is_unknown() -> None:
    expect_error(with_question(0, options=["yes", "no"]), "questions.smoke.options",
                 "binary question")


def test_group_naming_an_unknown_option() -> None:
    expect_error(with_question(1, groups={"often": ["weekly", "hourly"]}),
                 "questions.freq.groups.often", "not one of the options")


def test_empty_group() -> None:
    expect_error(with_question(1, groups={"often": []}), "questions.freq.groups.often")


def test_params_that_do_not_match() -> None:
    d = with_question(1, params={"p": "1/2", "q": "1/6"})
    expect_error(d, "questions.freq.params", "do not match")


@pytest.mark.parametrize("params", [True, 1, "p=1/2", ["p"]])
def test_params_that_are_not_a_table(params: Any) -> None:
    expect_error(with_question(1, params=params), "questions.freq.params", "must be a table")


def test_bad_survey_id_and_version() -> None:
    d = base()
    d["id"] = "Not A Slug"
    expect_error(d, "id", "slug")
    for bad in (0, 2**31, 2**63):  # a version fits every store's 32-bit version column
        d = base()
        d["version"] = bad
        expect_error(d, "version", "between 1 and 2147483647")
    for good in (2_017_120_701, 2**31 - 1):  # ODK's yyyymmddrr versions, the largest
        d = base()
        d["version"] = good
        assert Survey.from_dict(d).version == good
    d = base()
    d["version"] = "1"
    expect_error(d, "version", "integer")


@pytest.mark.parametrize("bad", ["habits\n", "\nhabits", "hab its"])
def test_an_id_with_a_newline_is_no_slug(bad: str) -> None:
    """Python's `$` also matches before a final newline; the page's JavaScript `$` does not.
    Ids are matched whole, so both sides refuse the same ids."""
    d = base()
    d["id"] = bad
    expect_error(d, "id", "slug")
    d = base()
    d["questions"][0]["id"] = bad
    with pytest.raises(SurveyError):
        Survey.from_dict(d)


def test_no_questions() -> None:
    d = base()
    d["questions"] = []
    expect_error(d, "questions", "non-empty")


def test_not_a_mapping() -> None:
    expect_error(["not", "a", "survey"], "survey")
    d = base()
    d["questions"][0] = "smoke"
    expect_error(d, "questions[0]")


def test_missing_text() -> None:
    expect_error(with_question(0, text=_DELETE), "questions.smoke.text", "non-empty")


# --- canonical form ----------------------------------------------------------------------------


def _reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


def test_canonical_bytes_ignore_key_order() -> None:
    a = Survey.from_dict(base())
    b = Survey.from_dict(_reversed_keys(base()))
    assert a.canonical_bytes() == b.canonical_bytes()
    assert a.sha256 == b.sha256


def test_canonical_bytes_ignore_spelled_out_defaults() -> None:
    plain = Survey.from_dict(base())
    spelled = base()
    spelled["description"] = ""
    for q in spelled["questions"]:
        q["mechanism"] = "auto"
        q["optional"] = False
        q["params"] = {}
    spelled["questions"][1]["params"] = dict(plain.questions[1].params)
    assert Survey.from_dict(spelled).canonical_bytes() == plain.canonical_bytes()


def test_canonical_form_round_trips() -> None:
    survey = Survey.from_dict(base())
    again = Survey.from_dict(json.loads(survey.canonical_bytes()))
    assert again == survey
    assert again.canonical_bytes() == survey.canonical_bytes()


def test_canonical_bytes_change_with_content() -> None:
    a = Survey.from_dict(base())
    for change in ({"epsilon": 1.25}, {"text": "Do you smoke at all?"}):
        assert Survey.from_dict(with_question(0, **change)).sha256 != a.sha256


def test_canonical_bytes_are_compact_sorted_utf8() -> None:
    d = base()
    d["title"] = "Gewohnheiten \u2013 Rauchen"
    raw = Survey.from_dict(d).canonical_bytes()
    assert "\u2013".encode() in raw  # UTF-8, not \\u escapes
    again = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"),
                       ensure_ascii=False).encode()
    assert raw == again


def test_auto_is_resolved_and_explained() -> None:
    survey = Survey.from_dict(base())
    for q in survey.questions:
        assert q.mechanism != "auto"
        assert q.mechanism_choice and q.mechanism_choice.startswith("auto:")
        assert q.params


# --- files -------------------------------------------------------------------------------------


TOML = """
id = "habits"
title = "Habits"
version = 1

[[questions]]
id = "smoke"
text = "Do you smoke?"
type = "binary"
epsilon = 1.0

[[questions]]
id = "freq"
text = "How often?"
type = "categorical"
epsilon = 2.0
options = ["never", "monthly", "weekly", "daily"]
groups = { often = ["weekly", "daily"] }

[[questions]]
id = "hours"
text = "Hours of sleep"
type = "integer"
epsilon = 1.5
min = 0
max = 16
"""


def test_toml_and_json_load_to_the_same_bytes(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(TOML)
    (tmp_path / "s.json").write_text(json.dumps(_reversed_keys(base()), indent=2))
    a, b = load_survey(tmp_path / "s.toml"), load_survey(tmp_path / "s.json")
    assert a.canonical_bytes() == b.canonical_bytes() == Survey.from_dict(base()).canonical_bytes()


@pytest.mark.parametrize("name, content, problem", [
    ("s.toml", "id = ", "invalid TOML"),
    ("s.json", "{", "invalid JSON"),
    ("s.json", '{"id": NaN}', "invalid JSON"),
    ("s.yaml", "id: x", "unknown file type"),
    ("s.json", b"\xff\xfe", "not UTF-8"),
])
def test_bad_files(tmp_path: Path, name: str, content: Any, problem: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(SurveyError, match=problem):
        load_survey(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SurveyError, match="cannot read"):
        load_survey(tmp_path / "nope.toml")


def test_bundled_sample_survey() -> None:
    resource = importlib.resources.files("ldpsurvey.shared") / "samples" / "sensitive.toml"
    with importlib.resources.as_file(resource) as path:
        survey = load_survey(path)
    types = {q.type for q in survey.questions}
    assert {"binary", "categorical", "integer"} <= types
    assert survey.version == 1
    assert survey.total_epsilon <= 5
    categorical = next(q for q in survey.questions if q.type == "categorical")
    assert len(categorical.options) >= 4 and categorical.groups


def test_survey_is_not_mutated_by_parsing() -> None:
    d = base()
    before = copy.deepcopy(d)
    Survey.from_dict(d)
    assert d == before
