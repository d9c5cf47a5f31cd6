"""Cascading options (shared/option_filter.py): a categorical question's `filter` names an
earlier question with options and, per option, the answers it goes with; it is validated
naming `questions.<id>.filter...`, signed only when given (older bytes unchanged), leaves the
mechanism over the full option list, and `shown_options` narrows what the device shows, all
of them when it cannot narrow (not asked, skipped, a special value, nothing matching)."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.shared.errors import AnswerError, SurveyError
from ldpsurvey.shared.manifest import sign_survey, verify_manifest
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.option_filter import check_shown, shown_for, shown_options
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey

REGIONS = ["North", "South"]
TOWNS = ["Aville", "Btown", "Cburg", "Dham"]
FILTER = {"by": "region", "values": {"Aville": ["North"], "Btown": ["North"],
                                     "Cburg": ["South"], "Dham": ["South", "North"]}}


def cascading(**town: Any) -> dict[str, Any]:
    return {"id": "cascade", "title": "Cascade", "version": 1, "questions": [
        {"id": "region", "type": "categorical", "text": "Region?", "epsilon": 1.0,
         "options": REGIONS, "special": {"dont_know": "Don't know"}, "optional": True},
        {"id": "town", "type": "categorical", "text": "Town?", "epsilon": 1.0,
         "options": TOWNS, "filter": copy.deepcopy(FILTER), **town}]}


def test_a_filter_is_signed_and_the_mechanism_ranges_over_every_option():
    survey = Survey.from_dict(cascading())
    town = survey.question("town")
    assert town.option_filter is not None and town.option_filter.by == "region"
    # Dham's values are kept in region's order: one canonical form
    assert town.option_filter.values["Dham"] == ("North", "South")
    assert town.to_dict()["filter"]["values"]["Dham"] == ["North", "South"]
    assert mechanism_for(town).k == len(TOWNS)  # the report: the full list
    same = copy.deepcopy(cascading())
    same["questions"][1]["filter"]["values"]["Dham"] = ["North", "South"]
    assert Survey.from_dict(same).canonical_bytes() == survey.canonical_bytes()
    manifest = json.loads(json.dumps(sign_survey(survey, Ed25519PrivateKey.generate())
                                     .to_dict()))
    assert verify_manifest(manifest).survey.question("town").option_filter == town.option_filter


def test_a_survey_without_a_filter_keeps_its_bytes():
    data = cascading()
    del data["questions"][1]["filter"]
    survey = Survey.from_dict(data)
    assert b'"filter"' not in survey.canonical_bytes()
    assert "filter" not in survey.question("town").to_dict()


def test_the_filter_changes_the_signed_bytes():
    data = cascading()
    del data["questions"][1]["filter"]
    assert Survey.from_dict(data).sha256 != Survey.from_dict(cascading()).sha256


@pytest.mark.parametrize(("town", "field", "says"), [
    ({"filter": "region"}, "questions.town.filter", "must be a table"),
    ({"filter": {"by": "region", "values": FILTER["values"], "column": "x"}},
     "questions.town.filter.column", "unknown key"),
    ({"filter": {"values": FILTER["values"]}}, "questions.town.filter.by", "earlier question"),
    ({"filter": {"by": "later", "values": FILTER["values"]}}, "questions.town.filter.by",
     "not a question asked before"),
    ({"filter": {"by": "town", "values": FILTER["values"]}}, "questions.town.filter.by",
     "not a question asked before"),
    ({"filter": {"by": "ever", "values": FILTER["values"]}}, "questions.town.filter.by",
     "is a yes/no question"),
    ({"filter": {"by": "region", "values": ["North"]}}, "questions.town.filter.values",
     "must be a table"),
    ({"filter": {"by": "region", "values": {**FILTER["values"], "Ecity": ["North"]}}},
     "questions.town.filter.values.Ecity", "not an option of this question"),
    ({"filter": {"by": "region", "values": {"Aville": ["North"]}}},
     "questions.town.filter.values.Btown", "missing"),
    ({"filter": {"by": "region", "values": {**FILTER["values"], "Aville": []}}},
     "questions.town.filter.values.Aville", "non-empty list"),
    ({"filter": {"by": "region", "values": {**FILTER["values"], "Aville": ["East"]}}},
     "questions.town.filter.values.Aville", "'East' is not an option of 'region'"),
    ({"filter": {"by": "region", "values": {**FILTER["values"], "Aville": ["Don't know"]}}},
     "questions.town.filter.values.Aville", "not an option of 'region'"),
    ({"filter": {"by": "region", "values": {**FILTER["values"], "Aville": ["North", "North"]}}},
     "questions.town.filter.values.Aville", "twice"),
])
def test_a_bad_filter_is_refused_naming_its_field(town, field, says):
    data = cascading(**town)
    data["questions"].insert(0, {"id": "ever", "type": "binary", "text": "Ever?",
                                 "epsilon": 1.0})
    data["questions"].append({"id": "later", "type": "categorical", "text": "Later?",
                              "epsilon": 1.0, "options": REGIONS})
    with pytest.raises(SurveyError) as caught:
        Survey.from_dict(data)
    assert caught.value.field == field
    assert says in caught.value.problem


def test_only_a_categorical_question_takes_a_filter():
    data = cascading()
    data["questions"][1]["type"] = "ordinal"
    with pytest.raises(SurveyError) as caught:
        Survey.from_dict(data)
    assert caught.value.field == "questions.town.filter"


@pytest.mark.parametrize(("answer", "shown"), [
    ("North", ("Aville", "Btown", "Dham")),
    ("South", ("Cburg", "Dham")),
    (None, tuple(TOWNS)),  # skipped (optional)
    (NOT_ASKED, tuple(TOWNS)),  # not asked (skip logic)
    ("Don't know", tuple(TOWNS)),  # a special value
    ("Nowhere", tuple(TOWNS)),  # not an option (never given on a device)
])
def test_the_shown_options_follow_the_answer_or_are_all_of_them(answer, shown):
    survey = Survey.from_dict(cascading())
    town, region = survey.question("town"), survey.question("region")
    assert shown_options(town, region, answer) == shown
    answers = {} if answer is None else {"region": answer}
    assert shown_for(town, {q.id: q for q in survey.questions}, answers) == shown


def test_a_multiselect_answer_shows_the_options_of_any_option_ticked():
    """XLSForm's selected(${q}, name): the options the respondent ticked earlier."""
    data = {"id": "ticked", "title": "Ticked", "version": 1, "questions": [
        {"id": "sources", "type": "multiselect", "text": "Sources?", "epsilon": 1.0,
         "options": ["own", "bought", "aid"]},
        {"id": "main", "type": "categorical", "text": "Main one?", "epsilon": 1.0,
         "options": ["own", "bought", "aid"],
         "filter": {"by": "sources", "values": {o: [o] for o in ["own", "bought", "aid"]}}}]}
    survey = Survey.from_dict(data)
    main, sources = survey.question("main"), survey.question("sources")
    assert shown_options(main, sources, ["aid", "own"]) == ("own", "aid")
    assert shown_options(main, sources, []) == ("own", "bought", "aid")


DOC = Path(__file__).resolve().parents[2] / "docs" / "option-filter.md"


def test_the_docs_example_parses_and_its_errors_are_the_ones_written():
    text = DOC.read_text(encoding="utf-8")
    example = tomllib.loads(re.search(r"```toml\n(.*?)```", text, re.S).group(1))
    data = {"id": "doc", "title": "Doc", "version": 1, **example}
    district = Survey.from_dict(data).question("district")
    assert district.option_filter.values["Guzara"] == ("Herat",)
    written = re.search(r"```\n(questions\..*?)```", text, re.S).group(1).splitlines()
    age = {"id": "age", "type": "integer", "text": "Age?", "epsilon": 1.0, "min": 0, "max": 9}
    broken = []
    for change in ({"by": "age"}, {"values": {k: v for k, v in
                                              example["questions"][1]["filter"]["values"].items()
                                              if k != "Paghman"}},
                   {"values": {**example["questions"][1]["filter"]["values"],
                               "Guzara": ["Herad"]}}):
        d = copy.deepcopy(data)
        d["questions"].insert(0, age)
        d["questions"][2]["filter"].update(change)
        with pytest.raises(SurveyError) as caught:
            Survey.from_dict(d)
        broken.append(str(caught.value))
    assert broken == written


def two_server_questions() -> list[dict]:
    """`cascading()`'s questions for a two-server survey: central ε, no local ε or specials."""
    questions = copy.deepcopy(cascading()["questions"])
    for q in questions:
        q.pop("epsilon")
        q.pop("special", None)
        q["central_epsilon"] = 1.0
    return questions


def test_a_two_server_question_keeps_its_filter():
    """The filter is about what is shown: a two-server question (local ε0 or none) takes one."""
    from support.two_server_stand_ins import two_server_survey_dict

    questions = two_server_questions()
    questions[1]["local_epsilon"] = 2.0
    survey = Survey.from_dict(two_server_survey_dict(questions))
    assert survey.question("town").option_filter.by == "region"
    assert survey.to_dict()["questions"][1]["filter"] == cascading()["questions"][1]["filter"] | {
        "values": {**FILTER["values"], "Dham": ["North", "South"]}}


@pytest.mark.parametrize(("answers", "refused"), [
    ({"region": "North", "town": "Cburg"}, "'Aville', 'Btown', 'Dham'"),
    ({"region": "South", "town": "Btown"}, "'Cburg', 'Dham'"),
    ({"region": "South", "town": "Dham"}, None),
    ({"region": "Don't know", "town": "Aville"}, None),  # a special value: every option shows
    ({"region": NOT_ASKED, "town": "Aville"}, None),
    ({"town": "Aville"}, None),  # region skipped
    ({"region": "North"}, None),  # town left out: the filter refuses nothing
    ({"region": "North", "town": "Nowhere"}, None),  # not an option: the mechanism's to refuse
])
def test_check_shown_refuses_only_an_option_the_earlier_answer_hides(answers, refused):
    survey = Survey.from_dict(cascading(special={"refused": "Prefer not to say"}))
    if refused is None:
        check_shown(survey.questions, answers)
        return
    with pytest.raises(AnswerError) as caught:
        check_shown(survey.questions, answers)
    message = str(caught.value)
    assert "\n" not in message and "'town'" in message and f"({answers['region']!r})" in message
    # the options it allows: those shown, then its special values (never filtered)
    assert message.endswith(f"{refused}, 'Prefer not to say'")


def test_check_shown_reads_the_options_ticked_in_a_multiselect():
    data = {"id": "ticked", "title": "Ticked", "version": 1, "questions": [
        {"id": "sources", "type": "multiselect", "text": "Sources?", "epsilon": 1.0,
         "options": ["own", "bought", "aid"]},
        {"id": "main", "type": "categorical", "text": "Main one?", "epsilon": 1.0,
         "options": ["own", "bought", "aid"],
         "filter": {"by": "sources", "values": {o: [o] for o in ["own", "bought", "aid"]}}}]}
    questions = Survey.from_dict(data).questions
    check_shown(questions, {"sources": ["aid", "own"], "main": "own"})
    with pytest.raises(AnswerError, match=r"'main': 'bought' .* \('own', 'aid'\)"):
        check_shown(questions, {"sources": ["aid", "own"], "main": "bought"})


def test_a_two_server_upload_refuses_an_option_the_earlier_answer_hides():
    from ldpsurvey.client.two_server import check_answers
    from support.two_server_stand_ins import two_server_survey_dict

    questions = two_server_questions()
    survey = Survey.from_dict(two_server_survey_dict(questions))
    assert check_answers(survey, {"region": "South", "town": "Cburg"})["town"] == "Cburg"
    with pytest.raises(AnswerError, match="'town': 'Cburg' does not go with"):
        check_answers(survey, {"region": "North", "town": "Cburg"})


def test_the_docs_refusal_of_a_hidden_option_is_the_one_written():
    text = DOC.read_text(encoding="utf-8")
    example = tomllib.loads(re.search(r"```toml\n(.*?)```", text, re.S).group(1))
    survey = Survey.from_dict({"id": "doc", "title": "Doc", "version": 1, **example})
    written = re.search(r"```\nError: (question .*?)\n```", text, re.S).group(1)
    with pytest.raises(AnswerError) as caught:
        check_shown(survey.questions, {"province": "Kabul", "district": "Guzara"})
    assert str(caught.value) == written
