"""`ldpsurvey import xlsform` (analyst/xlsform_import/): every mapped feature, every refusal
by row with its alternative, every XLSForm question type, the TOML written, and plan on it."""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.commands.import_form import import_xlsform_command
from ldpsurvey.analyst.xlsform_import import (
    FIX,
    UNSUPPORTED,
    ImportOptions,
    ImportRefused,
    XlsFormError,
    import_xlsform,
)
from ldpsurvey.analyst.xlsform_import.errors import quoted
from ldpsurvey.shared.survey import Survey, load_survey
from support.xlsform import YES_NO, xlsform

FREQ = [{"list_name": "freq", "name": str(i), "label": label}
        for i, label in enumerate(["Never", "Monthly", "Weekly", "Daily"], 1)]
SUBS = [{"list_name": "subs", "name": n, "label": label}
        for n, label in [("cannabis", "Cannabis"), ("cocaine", "Cocaine"),
                         ("ecstasy", "Ecstasy"), ("opioids", "Opioids")]]
USED = {"type": "select_one yn", "name": "used", "label": "Used cannabis?", "required": "yes",
        "ldp_epsilon": 1}


def run(tmp_path: Path, survey: list[dict[str, Any]], choices: list[dict[str, Any]] | None = None,
        settings: dict[str, Any] | None = None, **options: Any):
    path = xlsform(tmp_path / "form.xlsx", survey, YES_NO + FREQ + SUBS if choices is None
                   else choices, settings or {"form_id": "t", "version": 1})
    return import_xlsform(path, ImportOptions(**options))


def question(result: Any, qid: str) -> dict[str, Any]:
    return next(q for q in result.data["questions"] if q["id"] == qid)


def refused(tmp_path: Path, survey: list[dict[str, Any]], **kw: Any) -> list[Any]:
    with pytest.raises(ImportRefused) as info:
        run(tmp_path, survey, **kw)
    return list(info.value.problems)


# --- what is mapped ------------------------------------------------------------------------


def test_select_one_integer_and_select_multiple(tmp_path: Path) -> None:
    result = run(tmp_path, [
        USED,
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1.5,
         "required": "yes"},
        {"type": "select_one freq", "name": "freq_o", "label": "How often?", "ldp_epsilon": 1,
         "ldp_type": "ordinal", "required": "yes"},
        {"type": "select_one freq", "name": "freq_l", "label": "How often?", "ldp_epsilon": 1,
         "appearance": "likert", "required": "yes"},
        {"type": "select_one yn", "name": "yn_cat", "label": "Yes or no?", "ldp_epsilon": 1,
         "ldp_type": "categorical"},
        {"type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 2,
         "constraint": "count-selected(.) <= 2"},
        {"type": "select_multiple subs", "name": "subs_r", "label": "Which?", "ldp_epsilon": 2,
         "required": "yes"},
        {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
         "constraint": ". >= 0 and . <= 30", "required": "true"},
        {"type": "integer", "name": "age", "label": "Age?", "ldp_epsilon": 1,
         "constraint": "(. > 17) and (. < 100)"},
        {"type": "range", "name": "pain", "label": "Pain?", "ldp_epsilon": 1,
         "parameters": "start=0 end=10 step=1"},
        {"type": "select_one freq", "name": "told", "label": "Told?", "ldp_disclosed": "yes"},
        {"type": "select_one freq", "name": "mech", "label": "Mech?", "ldp_epsilon": 1,
         "ldp_mechanism": "oue"},
    ])
    q = {d["id"]: d for d in result.data["questions"]}
    assert q["used"] == {"id": "used", "type": "binary", "text": "Used cannabis?",
                         "epsilon": 1.0, "mechanism": "auto"}
    assert q["freq"]["type"] == "categorical"
    assert q["freq"]["options"] == ["Never", "Monthly", "Weekly", "Daily"]  # form order
    assert q["freq_o"]["type"] == q["freq_l"]["type"] == "ordinal"
    assert q["yn_cat"]["type"] == "categorical" and q["yn_cat"]["optional"] is True
    assert q["subs"]["type"] == "multiselect" and q["subs"]["max_selected"] == 2
    assert "required_min" not in q["subs"] and "optional" not in q["subs"]
    assert q["subs_r"]["required_min"] == 1 and "max_selected" not in q["subs_r"]
    assert (q["days"]["min"], q["days"]["max"]) == (0, 30) and "optional" not in q["days"]
    assert (q["age"]["min"], q["age"]["max"], q["age"]["optional"]) == (18, 99, True)
    assert (q["pain"]["type"], q["pain"]["min"], q["pain"]["max"]) == ("integer", 0, 10)
    assert q["told"]["disclosed"] is True and "epsilon" not in q["told"]
    assert q["mech"]["mechanism"] == "oue"
    survey = result.survey
    assert survey.question("subs").multiselect.max_selected == 2
    assert survey.question("mech").mechanism == "oue"
    assert survey.question("told").disclosed


def test_settings_become_id_title_version(tmp_path: Path) -> None:
    result = run(tmp_path, [USED], settings={"form_id": "Drug Use.2025", "version": "7",
                                             "form_title": "Drug use survey"})
    assert (result.survey.id, result.survey.title, result.survey.version) == (
        "drug-use-2025", "Drug use survey", 7)
    assert any("becomes the survey id 'drug-use-2025'" in n for n in result.notes)
    chosen = run(tmp_path, [USED], settings={"form_id": "x", "version": "2024031501"},
                 survey_id="mine", version=3)
    assert (chosen.survey.id, chosen.survey.version) == ("mine", 3)


def test_an_odk_yyyymmddrr_version_is_the_survey_version(tmp_path: Path) -> None:
    """ODK's docs number versions by date (2024031501): the survey keeps that version."""
    result = run(tmp_path, [USED], settings={"form_id": "t", "version": "2024031501"})
    assert result.survey.version == 2024031501


@pytest.mark.parametrize("version", ["2147483648", "1.2", "v3", "0", "\u00b2", "\u0661\u0662",
                                     "2022-04-11 16:26:28.971000", "vJ3kq8sHDcXk7vWaB2tLmN"])
def test_a_version_ldpsurvey_cannot_hold_makes_version_1_said_in_the_notes(
        tmp_path: Path, version: str) -> None:
    """The UCL form's '2022-04-11 16:26:28.971000', KoboToolbox's generated ids: the form
    imports as version 1, the note names --survey-version ('²' and Arabic-Indic digits pass
    str.isdigit(); int() refuses the first: no traceback)."""
    result = run(tmp_path, [USED], settings={"form_id": "t", "version": version})
    assert result.survey.version == 1
    assert f"settings version {quoted(version)} is not an integer from 1 to 2147483647 " \
           "(ldpsurvey versions are): the survey is version 1 (--survey-version N to " \
           "choose)" in result.notes, result.notes


def test_the_version_option_named_is_the_one_the_command_has(tmp_path: Path) -> None:
    result = run(tmp_path, [USED], settings={"form_id": "t"})
    assert any("(--survey-version to choose)" in n for n in result.notes), result.notes
    options = {o for p in import_xlsform_command.params for o in p.opts}
    assert "--survey-version" in options and "--version" not in options


def test_a_min_batch_size_of_superscript_digits_is_refused_in_one_line(tmp_path: Path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    settings = {"form_id": "t", "version": 1, "collection": "two-server",
                "helper_url": "https://helper.example", "helper_hpke_key": b64url(b"h" * 32),
                "leader_hpke_key": b64url(b"l" * 32), "min_batch_size": "\u00b2"}
    with pytest.raises(XlsFormError, match="settings min_batch_size '\u00b2' is not a whole"):
        run(tmp_path, [{**USED, "ldp_central_epsilon": 1}], settings=settings)


def test_a_long_cell_is_quoted_by_its_start(tmp_path: Path) -> None:
    """A 15,000-character relevant or constraint is named by its first 80 characters, so the
    refusal stays one readable line."""
    relevant = " and ".join(["${used} = 'yes'"] * 1000)
    problems = refused(tmp_path, [USED, {**USED, "name": "again", "relevant": relevant}])
    assert len(str(problems[0])) < 500, str(problems[0])[:600]
    assert "its relevant \"${used} = 'yes' and" in str(problems[0])
    constraint = "(" * 500 + ". >= 0" + ")" * 500 + " and . <= 5"
    problems = refused(tmp_path, [{"type": "integer", "name": "n", "label": "N",
                                   "ldp_epsilon": 1, "constraint": constraint}])
    assert len(str(problems[0])) < 500 and "'((((" in str(problems[0])


@pytest.mark.parametrize("relevant, expected", [
    ("${used} = 'yes'", "used == true"),
    ("${used} = 'no'", "used == false"),
    ("${used} != 'yes'", "used != true"),
    ("selected(${used}, 'yes')", "used == true"),
    ("${freq} = '3'", "freq == 'Weekly'"),
    ("${freq} = 3", "freq == 'Weekly'"),
    ("'3' = ${freq}", "freq == 'Weekly'"),
    ("selected(${freq}, '4')", "freq == 'Daily'"),
    ("${freq} >= 3", "freq in ['Weekly', 'Daily']"),
    ("${freq} < 2", "freq in ['Never']"),
    ("selected(${subs}, 'cocaine')", "selected(subs, 'Cocaine')"),
    ("count-selected(${subs}) >= 2", "count_selected(subs) >= 2"),
    ("${subs} != ''", "count_selected(subs) > 0"),
    ("${days} > 3", "days > 3"),
    ("3 < ${days}", "days > 3"),
    ("${days} <= '10'", "days <= 10"),
    ("${used} = 'yes' and (${days} > 3 or selected(${subs}, 'opioids'))",
     "used == true and (days > 3 or selected(subs, 'Opioids'))"),
    ("not(${used} = 'yes')", "not used == true"),
    ("not(${used} = 'yes' or ${days} > 3)", "not (used == true or days > 3)"),
    ("${used} = 'yes' or true()", None),
    ("${used} != ''", None),                      # used is required and always asked
    ("${freq} != ''", "used == true"),            # freq is required when asked (used)
    ("${freq} = ''", "not (used == true)"),
])
def test_relevant_becomes_skip_logic(tmp_path: Path, relevant: str,
                                     expected: str | None) -> None:
    result = run(tmp_path, [
        USED,
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
         "relevant": "${used} = 'yes'", "required": "yes"},
        {"type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 2},
        {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
         "constraint": ". >= 0 and . <= 30", "required": "yes"},
        {"type": "select_one yn", "name": "follow", "label": "Follow-up?", "ldp_epsilon": 1,
         "relevant": relevant, "required": "yes"},
    ])
    assert question(result, "follow").get("relevant") == expected


INDICATORS = [
    USED,
    {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
     "relevant": "${used} = 'yes'", "required": "yes"},
    {"type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 2},
]
_USED, _DAILY, _COCAINE = "used == true", "freq == 'Daily'", "selected(subs, 'Cocaine')"
_SUM3 = ("(if(${used} = 'yes', 1, 0) + \nif(selected(${subs}, 'cocaine'),1,0) + \n"
         "if(${freq} = '4', 1, 0))")


def _indicators(x: Any) -> list[bool]:
    """XPath's three conditions of _SUM3 on an answer set (`x`: a question's XPath value,
    '' when not asked or not answered: selected() and `=` of '' are false)."""
    return [x("used") == "yes", "cocaine" in str(x("subs")).split(), x("freq") == "4"]


@pytest.mark.parametrize("relevant, expected, xpath", [
    (f"{_SUM3} >= 1", f"{_USED} or {_COCAINE} or {_DAILY}", lambda c: sum(c[:3]) >= 1),
    (f"{_SUM3} > 0", f"{_USED} or {_COCAINE} or {_DAILY}", lambda c: sum(c[:3]) > 0),
    (f"{_SUM3} != 0", f"{_USED} or {_COCAINE} or {_DAILY}", lambda c: sum(c[:3]) != 0),
    (f"{_SUM3} = 0", f"not ({_USED} or {_COCAINE} or {_DAILY})", lambda c: sum(c[:3]) == 0),
    (f"{_SUM3} < 1", f"not ({_USED} or {_COCAINE} or {_DAILY})", lambda c: sum(c[:3]) < 1),
    (f"{_SUM3} <= 0", f"not ({_USED} or {_COCAINE} or {_DAILY})", lambda c: sum(c[:3]) <= 0),
    (f"{_SUM3} >= 3", f"{_USED} and {_COCAINE} and {_DAILY}", lambda c: sum(c[:3]) >= 3),
    (f"{_SUM3} = 3", f"{_USED} and {_COCAINE} and {_DAILY}", lambda c: sum(c[:3]) == 3),
    (f"{_SUM3} < 3", f"not ({_USED} and {_COCAINE} and {_DAILY})", lambda c: sum(c[:3]) < 3),
    (f"1 <= {_SUM3}", f"{_USED} or {_COCAINE} or {_DAILY}", lambda c: sum(c[:3]) >= 1),
    # if(C, 0, 1) is 1 where C does not hold: not C
    ("if(${used} = 'yes', 0, 1) + if(selected(${subs}, 'cocaine'), 1, 0) > 0",
     f"not {_USED} or {_COCAINE}", lambda c: (not c[0]) + c[1] > 0),
    # sums in parentheses added up; one indicator alone
    ("(if(${used} = 'yes', 1, 0) + if(${freq} = '4', 1, 0)) + if(selected(${subs}, "
     "'cocaine'), 1, 0) = 0", f"not ({_USED} or {_DAILY} or {_COCAINE})",
     lambda c: sum(c[:3]) == 0),
    ("if(selected(${subs}, 'cocaine'), 1, 0) = 1", _COCAINE, lambda c: c[1]),
    # beside other terms
    (f"${{used}} = 'no' or {_SUM3} >= 1",
     f"used == false or {_USED} or {_COCAINE} or {_DAILY}",
     lambda c: sum(c[:3]) >= 1 or c[3]),
])
def test_a_relevant_adding_up_indicators_is_written_without_arithmetic(
        tmp_path: Path, relevant: str, expected: str, xpath: Any) -> None:
    """A sum of if(C, 1, 0) compared with a number (MSNA rows 192-194: 28 of them `>= 1`) is
    the same condition written with or/and/not: XPath's value on every answer set, a question
    not asked (freq) or not answered (subs, optional) included; the rewrite is noted."""
    follow = {"type": "select_one yn", "name": "follow", "label": "Follow-up?",
              "ldp_epsilon": 1, "relevant": relevant, "required": "yes"}
    result = run(tmp_path, [*INDICATORS, follow])
    assert question(result, "follow")["relevant"] == expected
    condition = result.survey.question("follow").condition
    for used, freq, subs in itertools.product((True, False), ("Never", "Daily"),
                                              (None, [], ["Cocaine"], ["Cocaine", "Opioids"])):
        answers = {"used": used, "freq": freq if used else None, "subs": subs}

        def x(name: str, a: dict[str, Any] = answers) -> str:
            names = {"Never": "1", "Daily": "4", True: "yes", False: "no"}
            given = a.get(name)
            if isinstance(given, list):
                return " ".join(label.lower() for label in given)
            return "" if given is None else names[given]

        conditions = [*_indicators(x), x("used") == "no"]
        assert condition.evaluate(answers) == xpath(conditions), answers
    note = next(n for n in result.notes if n.startswith("row 5 (follow, select_one yn)"))
    assert "imported as the same condition without arithmetic" in note, note
    assert any("without arithmetic" in line for line in result.toml.splitlines()
               if line.startswith("#")), result.toml


@pytest.mark.parametrize("relevant, reason", [
    (f"{_SUM3} >= 2", "it compares how many of 3 conditions hold (a sum of if(condition, 1, "
     "0)) with >= 2: that count of conditions would need arithmetic"),
    (f"{_SUM3} = 1", "with = 1: that count of conditions would need arithmetic"),
    (f"{_SUM3} >= ${{freq}}", "compares a sum of if() values with ${freq}: the count of "
     "conditions compared with anything but a number would need arithmetic"),
    ("if(${used} = 'yes', 1, 0) + 1 >= 1", "'+' adds 1: arithmetic"),
    ("if(${used} = 'yes', 2, 0) >= 1", "if() is read only as an indicator"),
    ("if(${used} = 'yes', 1, 0)", "a sum of if() values is a number here"),
])
def test_a_sum_of_indicators_only_arithmetic_writes_is_refused(
        tmp_path: Path, relevant: str, reason: str) -> None:
    follow = {"type": "select_one yn", "name": "follow", "label": "Follow-up?",
              "ldp_epsilon": 1, "relevant": relevant, "required": "yes"}
    result = run(tmp_path, [*INDICATORS, follow], skip_unsupported=True)
    problem = next(p for p in result.left_out if p.name == "follow")
    assert reason in problem.reason, problem.reason
    assert problem.topic == "conditions that cannot be translated"


def test_a_group_relevant_adding_up_indicators_is_noted_once_on_the_group(
        tmp_path: Path) -> None:
    result = run(tmp_path, [
        *INDICATORS,
        {"type": "begin_group", "name": "more", "label": "More", "relevant": f"{_SUM3} > 0"},
        {"type": "select_one yn", "name": "follow", "label": "Follow-up?", "ldp_epsilon": 1,
         "required": "yes"},
        {"type": "end_group"},
    ])
    assert question(result, "follow")["relevant"] == f"{_USED} or {_COCAINE} or {_DAILY}"
    said = [n for n in result.notes if "without arithmetic" in n]
    assert len(said) == 1 and said[0].startswith("row 5 (more, begin_group)"), said


TWO_ANSWERS = [
    USED,
    {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
     "constraint": ". >= 0 and . <= 30", "required": "yes"},
    {"type": "integer", "name": "now", "label": "Now?", "ldp_epsilon": 1,
     "constraint": ". >= 0 and . <= 30", "required": "yes", "relevant": "${used} = 'yes'"},
    {"type": "integer", "name": "then", "label": "Then?", "ldp_epsilon": 1,
     "constraint": ". >= 0 and . <= 30", "required": "yes", "relevant": "${used} = 'yes'"},
    {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
     "required": "yes", "relevant": "${used} = 'yes'"},
    {"type": "select_one freq", "name": "freq2", "label": "And now?", "ldp_epsilon": 1,
     "required": "yes", "relevant": "${days} > 0"},
    {"type": "select_one yn", "name": "used2", "label": "Used again?", "ldp_epsilon": 1,
     "required": "yes"},
    {"type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 2},
    {"type": "integer", "name": "maybe", "label": "Maybe?", "ldp_epsilon": 1,
     "constraint": ". >= 0 and . <= 30"},  # optional: may be left empty
]


def _x(answers: dict[str, Any], name: str) -> Any:
    """An answer as XPath holds it: '' when not asked, a choice name, a number."""
    given = answers.get(name)
    names = {"Never": "1", "Daily": "4", True: "yes", False: "no"}
    return "" if given is None else names.get(given, given) if not isinstance(given, int) \
        or isinstance(given, bool) else given


def _eq(a: Any, b: Any) -> bool:  # XPath `=` on two answers: '' = '' holds
    return str(a) == str(b)


def _lt(a: Any, b: Any) -> bool:  # XPath `<` on two answers: '' is NaN, false in every order
    return a != "" and b != "" and a < b


@pytest.mark.parametrize("relevant, expected, xpath", [
    ("${now} > ${then}", "now > then", lambda x: _lt(x("then"), x("now"))),
    ("${days} <= ${now}", "days <= now",
     lambda x: _lt(x("days"), x("now")) or (_eq(x("days"), x("now")) and x("now") != "")),
    ("${then} < ${days}", "then < days", lambda x: _lt(x("then"), x("days"))),
    # one side always answered when the condition is read: no two empty sides
    ("${days} != ${now}", "days != now", lambda x: not _eq(x("days"), x("now"))),
    ("${used} = ${used2}", "used == used2", lambda x: _eq(x("used"), x("used2"))),
    # both may be empty (not asked): XPath's '' = '' is true, '' != '' false
    ("${now} != ${then}", "now != then and (used == true)",
     lambda x: not _eq(x("now"), x("then"))),
    ("${now} = ${then}", "now == then or not (used == true)",
     lambda x: _eq(x("now"), x("then"))),
    ("${freq} = ${freq2}", "freq == freq2 or not ((used == true) or (days > 0))",
     lambda x: _eq(x("freq"), x("freq2"))),
    ("${used} = 'yes' and ${now}!=${then}", "used == true and now != then and (used == true)",
     lambda x: x("used") == "yes" and not _eq(x("now"), x("then"))),
    # an optional side is read with answered(): `maybe` may be skipped by anyone
    ("${maybe} != ${now}", "maybe != now and (answered(maybe) or (used == true))",
     lambda x: not _eq(x("maybe"), x("now"))),
    ("${maybe} = ${now}", "maybe == now or not (answered(maybe) or (used == true))",
     lambda x: _eq(x("maybe"), x("now"))),
    ("${maybe} != ${maybe}", "maybe != maybe and answered(maybe)", lambda x: False),
    ("${maybe} != ''", "answered(maybe)", lambda x: x("maybe") != ""),
    ("${maybe} = ''", "not answered(maybe)", lambda x: x("maybe") == ""),
])
def test_a_relevant_comparing_two_answers_keeps_xpaths_value(
        tmp_path: Path, relevant: str, expected: str, xpath: Any) -> None:
    """`${a} != ${b}` (MSNA: `${fsl_oxen_n_now} != ${fsl_oxen_n_ly}`) is a condition on the
    device with XPath's value on every answer set, the empty (not asked) answers included."""
    follow = {"type": "select_one yn", "name": "follow", "label": "Follow-up?",
              "ldp_epsilon": 1, "relevant": relevant, "required": "yes"}
    result = run(tmp_path, [*TWO_ANSWERS, follow])
    assert question(result, "follow")["relevant"] == expected
    condition = result.survey.question("follow").condition
    for used, days, used2, now, then, freq, freq2, maybe in itertools.product(
            (True, False), (0, 3), (True, False), (1, 3), (1, 3), ("Never", "Daily"),
            ("Never", "Daily"), (None, 1, 3)):
        answers = {"used": used, "days": days, "used2": used2,
                   "now": now if used else None, "then": then if used else None,
                   "freq": freq if used else None, "freq2": freq2 if days > 0 else None,
                   "maybe": maybe}
        assert condition.evaluate(answers) == xpath(lambda n, a=answers: _x(a, n)), answers


@pytest.mark.parametrize("relevant, refused", [
    ("${freq} < ${freq2}", "orders ${freq} and ${freq2}, which are not numbers"),
    ("${days} = ${freq}", "compares ${days} (integer) with ${freq} (categorical)"),
    ("${subs} = ${used}", "${subs} is multiselect, whose answer a comparison cannot read"),
    ("${freq} = ${used}", "compares ${freq} (categorical) with ${used} (binary)"),
    ("${days} > count-selected(${subs})", "compares ${days} with count-selected()"),
])
def test_a_relevant_comparing_two_answers_is_refused_where_it_cannot_be_kept(
        tmp_path: Path, relevant: str, refused: str) -> None:
    follow = {"type": "select_one yn", "name": "follow", "label": "Follow-up?",
              "ldp_epsilon": 1, "relevant": relevant, "required": "yes"}
    result = run(tmp_path, [*TWO_ANSWERS, follow], skip_unsupported=True)
    problem = next(p for p in result.left_out if p.name == "follow")
    assert refused in problem.reason, problem.reason


def test_a_relevant_comparing_an_unordered_with_an_ordered_answer_is_refused(
        tmp_path: Path) -> None:
    """A categorical and an ordinal answer are two kinds (a condition reads both as option
    labels, and orders only the ordinal one): the import refuses comparing them."""
    scale = {"type": "select_one freq", "name": "scale", "label": "On a scale?",
             "appearance": "likert", "ldp_epsilon": 1, "required": "yes"}
    follow = {"type": "select_one yn", "name": "follow", "label": "Follow-up?",
              "ldp_epsilon": 1, "relevant": "${freq} = ${scale}", "required": "yes"}
    result = run(tmp_path, [*TWO_ANSWERS, scale, follow], skip_unsupported=True)
    assert result.survey.question("scale").type == "ordinal"
    problem = next(p for p in result.left_out if p.name == "follow")
    assert "compares ${freq} (categorical) with ${scale} (ordinal)" in problem.reason, (
        problem.reason)


def test_a_group_relevant_is_added_to_each_question_inside(tmp_path: Path) -> None:
    result = run(tmp_path, [
        USED,
        {"type": "begin_group", "name": "more", "label": "More", "relevant": "${used} = 'yes'"},
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
         "required": "yes"},
        {"type": "select_one yn", "name": "daily", "label": "Daily?", "ldp_epsilon": 1,
         "required": "yes", "relevant": "${freq} = '4'"},
        {"type": "end_group"},
    ])
    assert question(result, "freq")["relevant"] == "used == true"
    assert question(result, "daily")["relevant"] == "(used == true) and (freq == 'Daily')"
    assert any("row 3 (more, begin_group): a display group: its label 'More' is not shown"
               in n and "relevant is added" in n for n in result.notes)


def test_translations_from_language_columns(tmp_path: Path) -> None:
    choices = [{"list_name": "freq", "name": "1", "label::English (en)": "Never",
                "label::Español (es)": "Nunca", "label::Français (fr)": "Jamais"},
               {"list_name": "freq", "name": "2", "label::English (en)": "Often",
                "label::Español (es)": "A menudo"}]
    result = run(tmp_path, [
        {"type": "note", "name": "intro", "label::English (en)": "Welcome.",
         "label::Español (es)": "Bienvenido.", "label::Français (fr)": "Bienvenue."},
        {"type": "select_one freq", "name": "freq", "label::English (en)": "How often?",
         "label::Español (es)": "¿Con qué frecuencia?", "hint::English (en)": "Past year",
         "hint::Español (es)": "Último año", "ldp_epsilon": 1, "required": "yes"},
    ], choices=choices, settings={"form_id": "t", "version": 1,
                                  "default_language": "English (en)",
                                  "form_title": "Habits", "form_title::Español (es)": "Hábitos"})
    data = result.data
    assert data["language"] == "en" and data["description"] == "Welcome."
    assert question(result, "freq")["hint"] == "Past year"
    assert data["translations"] == {
        "es": {"title": "Hábitos", "description": "Bienvenido.",
               "questions": {"freq": {"text": "¿Con qué frecuencia?", "hint": "Último año",
                                      "options": {"Never": "Nunca", "Often": "A menudo"}}}},
        "fr": {"description": "Bienvenue.",
               "questions": {"freq": {"options": {"Never": "Jamais"}}}}}
    assert result.survey.translations["es"].questions["freq"].options["Often"] == "A menudo"


def test_the_base_language_comes_from_default_language(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"type": "select_one yn", "name": "used", "label::English (en)": "Used?",
         "label::Español (es)": "¿Consumió?", "ldp_epsilon": 1},
    ], choices=YES_NO, settings={"form_id": "t", "version": 1,
                                 "default_language": "Español (es)"})
    assert result.data["language"] == "es"
    assert question(result, "used")["text"] == "¿Consumió?"
    assert result.data["translations"] == {"en": {"questions": {"used": {"text": "Used?"}}}}
    untagged = run(tmp_path, [{"type": "select_one yn", "name": "used", "label": "¿Usó?",
                               "ldp_epsilon": 1}], choices=YES_NO,
                   settings={"form_id": "t", "version": 1, "default_language": "Español (es)"})
    assert untagged.data["language"] == "es" and "translations" not in untagged.data


@pytest.mark.parametrize("columns, settings, message", [
    ({"label::Spanish": "¿Usó?"}, {}, "the language 'Spanish' has no BCP 47 code"),
    ({"label::English (en)": "Used?", "label::Inglés (en)": "x"}, {}, "both have the code"),
    ({"label::English (en)": "Used?"}, {"default_language": "Deutsch (de)"},
     "default_language 'Deutsch (de)' is none of the form's languages"),
])
def test_languages_refused(tmp_path: Path, columns: dict[str, str], settings: dict[str, str],
                           message: str) -> None:
    with pytest.raises(XlsFormError, match=re.escape(message)):
        run(tmp_path, [{"type": "select_one yn", "name": "used", "ldp_epsilon": 1, **columns}],
            choices=YES_NO, settings={"form_id": "t", "version": 1, **settings})


def test_two_server_collection(tmp_path: Path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    settings = {"form_id": "t", "version": 1, "collection": "two-server",
                "helper_url": "https://helper.example", "helper_hpke_key": b64url(b"h" * 32),
                "leader_hpke_key": b64url(b"l" * 32), "min_batch_size": 100}
    result = run(tmp_path, [
        {**{k: v for k, v in USED.items() if k != "ldp_epsilon"}, "ldp_central_epsilon": 1,
         "ldp_local_epsilon": 3},
        {"type": "select_one freq", "name": "freq", "label": "How often?", "required": "yes"},
    ], settings=settings, epsilon=0.5)
    assert result.survey.two_server is not None and result.survey.two_server.min_batch_size == 100
    assert question(result, "used")["central_epsilon"] == 1.0
    assert question(result, "used")["local_epsilon"] == 3.0
    assert question(result, "freq")["central_epsilon"] == 0.5  # --epsilon
    with pytest.raises(XlsFormError, match="needs the settings helper_hpke_key"):
        run(tmp_path, [USED], settings={k: v for k, v in settings.items()
                                        if k != "helper_hpke_key"})
    problems = refused(tmp_path, [USED], settings=settings)
    assert "not ldp_epsilon" in problems[0].reason and problems[0].kind == FIX


# --- what is refused, by row ---------------------------------------------------------------


@pytest.mark.parametrize("row, reason, alternative", [
    ({"type": "text", "name": "x", "label": "Why?"}, "free text", "offer a select_one list"),
    ({"type": "geopoint", "name": "x", "label": "Where?"}, "exact position",
     "a location question"),
    ({"type": "date", "name": "x", "label": "When?"}, "date or time", "a select_one of periods"),
    ({"type": "dateTime", "name": "x", "label": "When?"}, "date or time", "days ago"),
    ({"type": "time", "name": "x", "label": "When?"}, "date or time", "select_one of periods"),
    ({"type": "decimal", "name": "x", "label": "Weight?", "ldp_epsilon": 1},
     "a number without a range",
     ". >= 0 and . <= 5000"),
    ({"type": "calculate", "name": "x", "calculation": "1 + 1"}, "calculation",
     "drop the row"),
    ({"type": "image", "name": "x", "label": "Photo"}, "photo", "drop the row"),
    ({"type": "barcode", "name": "x", "label": "Scan"}, "free text", "select_one"),
    ({"type": "acknowledge", "name": "x", "label": "OK?"}, "acknowledgement",
     "the survey's introduction"),
    ({"type": "rank freq", "name": "x", "label": "Rank"}, "ranking", "the first choice"),
    ({"type": "start", "name": "x"}, "device metadata", "delete the row"),
    ({"type": "deviceid", "name": "x"}, "device metadata", "delete the row"),
    ({"type": "select_one freq", "name": "x", "label": "F", "choice_filter": "name != '1'",
      "ldp_epsilon": 1}, "is not a filter ldpsurvey reads", "drop choice_filter and list every "
     "option"),
    ({"type": "select_one freq", "name": "x", "label": "F", "constraint": ". != '1'",
      "ldp_epsilon": 1}, "is not a range", "drop the constraint"),
    ({"type": "integer", "name": "x", "label": "N", "constraint": ". mod 2 = 0",
      "ldp_epsilon": 1}, "is not a range", ". >= a and . <= b"),
    ({"type": "select_one yn or_other", "name": "x", "label": "F", "ldp_epsilon": 1},
     "'or_other' adds a free-text", "drop or_other"),
    ({"type": "select_one_from_file places.csv", "name": "x", "label": "F", "ldp_epsilon": 1},
     "in the file 'places.csv', which the import was not given (no --media)",
     "pass --media DIR with the form's attached places.csv, or list the options on the "
     "choices sheet"),
    ({"type": "select_one freq", "name": "x", "label": "F ${x}", "ldp_epsilon": 1},
     "shows its own answer", "without ${x}"),
    ({"type": "select_one freq", "name": "x", "label": "F", "required": "${used} = 'yes'",
      "ldp_epsilon": 1}, "required only sometimes", "yes or no"),
    ({"type": "select_one freq", "name": "x", "label": "F", "ldp_epsilon": 1,
      "relevant": "string-length(${used}) > 0"}, "string-length() is not supported",
     "write it with"),
    ({"type": "select_multiple subs", "name": "x", "label": "F", "ldp_epsilon": 1,
      "constraint": "not(selected(., 'cocaine')) and count-selected(.) <= 2"},
     "is not a bound on how many", "count-selected(.) <= m"),
])
def test_each_unsupported_row_is_refused_by_row_with_an_alternative(
        tmp_path: Path, row: dict[str, Any], reason: str, alternative: str) -> None:
    problems = refused(tmp_path, [USED, row])
    assert [(p.row, p.name) for p in problems] == [(3, "x")]
    assert reason in problems[0].reason and alternative in problems[0].alternative
    assert problems[0].kind == UNSUPPORTED
    # and --skip-unsupported imports the rest, listing it
    result = run(tmp_path, [USED, row], skip_unsupported=True)
    assert [q.id for q in result.survey.questions] == ["used"]
    assert [(p.row, p.name) for p in result.left_out] == [(3, "x")]
    assert f"# row 3 (x, {row['type']})" in result.toml


def test_a_repeat_is_refused_with_every_row_inside(tmp_path: Path) -> None:
    survey = [USED,
              {"type": "begin_repeat", "name": "people", "label": "Each person"},
              {"type": "select_one yn", "name": "smokes", "label": "Smokes?", "ldp_epsilon": 1},
              {"type": "end_repeat"},
              {"type": "select_one yn", "name": "after", "label": "After?", "ldp_epsilon": 1}]
    problems = refused(tmp_path, survey)
    assert [(p.row, p.name) for p in problems] == [(3, "people"), (4, "smokes")]
    assert "unknown number of times" in problems[0].reason
    assert "inside the refused begin_repeat 'people' (row 3)" in problems[1].reason
    result = run(tmp_path, survey, skip_unsupported=True)
    assert [q.id for q in result.survey.questions] == ["used", "after"]


def test_groups_that_are_not_display_groups_are_refused(tmp_path: Path) -> None:
    problems = refused(tmp_path, [
        USED,
        {"type": "begin_group", "name": "g", "label": "G", "relevant": "today() > 3"},
        {"type": "select_one yn", "name": "inner", "label": "Inner?", "ldp_epsilon": 1},
        {"type": "end_group"},
        {"type": "begin_group", "name": "h", "label": "H", "read_only": "yes"},
        {"type": "select_one yn", "name": "inner2", "label": "Inner?", "ldp_epsilon": 1},
        {"type": "end_group"}])
    assert [(p.row, p.name) for p in problems] == [(3, "g"), (4, "inner"), (6, "h"),
                                                  (7, "inner2")]
    assert "today() is not supported" in problems[0].reason
    assert "read-only" in problems[2].reason


def test_a_condition_on_a_left_out_row_leaves_its_question_out_too(tmp_path: Path) -> None:
    survey = [USED, {"type": "text", "name": "why", "label": "Why?"},
              {"type": "select_one yn", "name": "more", "label": "More?", "ldp_epsilon": 1,
               "relevant": "${why} != ''", "required": "yes"}]
    problems = refused(tmp_path, survey)
    assert [(p.row, p.name) for p in problems] == [(3, "why"), (4, "more")]
    assert "reads ${why} (row 3, text), which is not imported" in problems[1].reason
    result = run(tmp_path, survey, skip_unsupported=True)
    assert [p.name for p in result.left_out] == ["why", "more"]


def test_a_condition_on_a_later_question_is_refused(tmp_path: Path) -> None:
    problems = refused(tmp_path, [
        {**USED, "relevant": "${later} = 'yes'"},
        {"type": "select_one yn", "name": "later", "label": "Later?", "ldp_epsilon": 1}])
    assert problems[0].name == "used" and "comes later in the form" in problems[0].reason


def test_rows_that_need_fixing_are_listed_first_and_left_out_only_with_skip_unsupported(
        tmp_path: Path) -> None:
    survey = [{"type": "select_one yn", "name": "used", "label": "Used?"},  # no ε
              {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1},
              {"type": "select_one yn", "name": "eps", "label": "E?", "ldp_epsilon": "lots"},
              {"type": "select_one yn", "name": "too", "label": "T?", "ldp_epsilon": 1,
               "ldp_disclosed": "yes"},
              {"type": "text", "name": "why", "label": "Why?"},
              {"type": "select_one yn", "name": "ok", "label": "OK?", "ldp_epsilon": 1}]
    expected = [(2, "used", FIX), (4, "eps", FIX), (5, "too", FIX), (3, "days", UNSUPPORTED),
                (6, "why", UNSUPPORTED)]  # the rows that need fixing first, then the others
    problems = refused(tmp_path, survey)
    assert [(p.row, p.name, p.kind) for p in problems] == expected
    assert "no ε" in problems[0].reason and "--epsilon" in problems[0].alternative
    assert "'lots' is not a number > 0" in problems[1].reason
    assert "a disclosed row has no ldp_epsilon" in problems[2].reason
    # Like a decimal, an unbounded integer has no private mechanism: it is left out (and
    # said, with the range that would import it), not a mistake in the form.
    assert "an integer without a range cannot be randomized" in problems[3].reason
    assert ". >= 0 and . <= 30" in problems[3].alternative
    # --skip-unsupported leaves every one out, the rows to fix listed apart (never quietly)
    result = run(tmp_path, survey, skip_unsupported=True)
    assert [q.id for q in result.survey.questions] == ["ok"]
    assert [(p.row, p.name, p.kind) for p in result.left_out] == expected
    assert [p.name for p in result.to_fix] == ["used", "eps", "too"]
    result = run(tmp_path, survey[:1], epsilon=0.7)  # --epsilon fills the row without one
    assert result.survey.question("used").epsilon == 0.7


def test_survey_checks_are_mapped_back_to_rows(tmp_path: Path) -> None:
    survey = [
        USED,
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
         "relevant": "${used} = 'yes'"},  # not required: optional, with a hidden condition
        {"type": "select_one freq", "name": "big", "label": "F", "ldp_epsilon": 1,
         "ldp_mechanism": "nope", "required": "yes"},
        {"type": "select_one yn", "name": "again", "label": "Again?", "ldp_epsilon": 1,
         "relevant": "${freq} = '3'", "required": "yes"},  # reads freq
    ]
    problems = refused(tmp_path, survey)
    assert [(p.row, p.name, p.kind) for p in problems] == [(4, "big", FIX)]
    assert problems[0].reason.startswith("ldp_mechanism: ")
    # An optional follow-up of a randomized answer would tell the server, by sending nothing
    # when declined, that it was asked: it is imported as required (sent by everyone,
    # randomized, 'not asked' where it does not apply), said in a note and in its TOML
    # comment; the question that reads it follows it.
    result = run(tmp_path, survey, skip_unsupported=True)
    assert [q.id for q in result.survey.questions] == ["used", "freq", "again"]
    assert not result.survey.question("freq").optional
    assert result.survey.question("freq").not_asked
    assert [(p.name, p.kind) for p in result.left_out] == [("big", FIX)]
    note = next(n for n in result.notes if "imported as required" in n)
    assert note.startswith("row 3 (freq, select_one freq): optional in the form, imported as "
                           "required: its condition reads randomized answers (used)")
    assert "'prefer not to say' choice" in note
    assert "imported as required" in result.toml.split('id = "freq"')[0].split('id = "used"')[1]


def test_every_optional_follow_up_is_made_required_in_one_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The survey's check finds every optional follow-up of randomized answers in one pass
    (`Survey.from_dict(amend=...)`): the import checks the survey once per question it
    refuses and once more, not once per follow-up (83 times for the IMPACT MSNA, 30 s), and
    imports what converting them one check at a time did: each one made required with its
    note, in the form's order, one refused after it was made required (wrong after its
    condition) keeping its note, and none for one left out with a question it reads."""
    follow = {"type": "select_one freq", "label": "How often?", "ldp_epsilon": 1}
    survey = [
        USED,
        {**follow, "name": "freq", "relevant": "${used} = 'yes'"},  # made required
        {**follow, "name": "bad_follow", "relevant": "${freq} = '3'",
         "ldp_mechanism": "nope"},  # made required, then refused for its mechanism
        {**follow, "name": "big", "ldp_mechanism": "nope", "required": "yes"},  # refused
        {**follow, "name": "after_big", "relevant": "${big} = '3'"},  # left out with big
        {**follow, "name": "again", "relevant": "${freq} = '2'"},  # reads a made required
        *({**follow, "name": f"more{i}", "relevant": "${used} = 'yes'"} for i in range(20)),
    ]
    checks = []
    check = Survey.from_dict

    def counted(data: Any, amend: Any = None) -> Survey:
        checks.append(len(data["questions"]))
        return check(data, amend=amend)

    monkeypatch.setattr(Survey, "from_dict", counted)
    result = run(tmp_path, survey, skip_unsupported=True)
    # the whole table, then without bad_follow (refused after it was made required), then
    # without big and after_big (which reads it)
    assert checks == [26, 25, 23]
    made = ["freq", "again", *(f"more{i}" for i in range(20))]
    assert [q.id for q in result.survey.questions] == ["used", *made]
    assert all(not q.optional and q.not_asked for q in result.survey.questions[1:])
    notes = [n for n in result.notes if "imported as required" in n]
    assert [n.split(",")[0] for n in notes] == [
        "row 3 (freq", "row 4 (bad_follow", "row 7 (again",
        *(f"row {8 + i} (more{i}" for i in range(20))]
    assert "its condition reads randomized answers (freq)" in notes[2]
    assert [(p.row, p.name, p.kind) for p in result.left_out] == [
        (4, "bad_follow", FIX), (5, "big", FIX), (6, "after_big", FIX)]
    assert result.toml.count("imported as required") == 22  # each question's TOML comment
    assert not any("optional" in q for q in tomllib.loads(result.toml)["questions"])


def test_notes_become_the_introduction_or_are_said_to_be_left_out(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"type": "note", "name": "hello", "label": "Thank you for taking part."},
        {"type": "note", "name": "anon", "label": "Your answers are randomized."},
        USED,
        {"type": "note", "name": "mid", "label": "Now about alcohol."},
    ])
    assert result.data["description"] == ("Thank you for taking part.\n\n"
                                          "Your answers are randomized.")
    notes = "\n".join(result.notes)
    assert "row 2 (hello, note): before the first question" in notes
    assert "row 5 (mid, note): a note between questions is not shown" in notes
    assert "'Now about alcohol.'" in notes


def test_unknown_ldp_columns_and_unreadable_forms(tmp_path: Path) -> None:
    with pytest.raises(XlsFormError, match="'ldp_epsilion' is not an ldpsurvey column"):
        run(tmp_path, [{**USED, "ldp_epsilion": 1}])
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(XlsFormError, match=r"not a readable \.xlsx workbook \(the file is "
                       "truncated or damaged"):
        import_xlsform(bad)
    with pytest.raises(XlsFormError, match=r"an XLSForm is a \.xlsx"):
        import_xlsform(tmp_path / "form.ods")
    with pytest.raises(XlsFormError, match="no such file"):
        import_xlsform(tmp_path / "missing.xlsx")
    missing_label = tmp_path / "nolabel.xlsx"
    xlsform(missing_label, [{"type": "integer", "name": "n", "ldp_epsilon": 1,
                             "constraint": ". >= 0 and . <= 3"}])
    with pytest.raises(ImportRefused, match=r"row 2 .* it has no label"):
        import_xlsform(missing_label)


# Everything else is refused by row with an alternative. pyxform itself refuses the rows
# these tests write for a few types (audit and background-geopoint need other cells, the
# "from"/"using"/external spellings a list or file that is not there).
IMPORTED_TYPES = {
    "int": "imported integer", "integer": "imported integer", "q int": "imported integer",
    "add integer prompt": "imported integer", "percentage": "imported integer",
    "number of days in last month": "imported integer",
    "number of days in last six months": "imported integer",
    "number of days in last year": "imported integer", "range": "imported integer",
    "decimal": "imported decimal", "q decimal": "imported decimal",
    "add decimal prompt": "imported decimal",
    "select_one freq": "imported categorical", "select_multiple subs": "imported multiselect",
    "note": "not a question",
    "audit": "pyxform", "background-geopoint": "pyxform", "select all that apply from": "pyxform",
    "select one external": "pyxform", "select one using": "pyxform",
    "select_one_external freq": "pyxform"}


def test_every_xlsform_question_type_is_mapped_or_refused(tmp_path: Path) -> None:
    """Exhaustive over pyxform's question types: each imports or is refused by row with an
    alternative (or is refused by pyxform itself, said as such), never anything else."""
    from pyxform.question_type_dictionary import QUESTION_TYPE_DICT

    types = [*sorted(QUESTION_TYPE_DICT), "select_one freq", "select_multiple subs",
             "select_one_external freq", "rank freq"]
    outcomes = {}
    for i, xls_type in enumerate(types):
        row = {"type": xls_type, "name": f"q{i}", "label": "Q", "ldp_epsilon": 1,
               "required": "yes"}
        if xls_type in ("calculate", "q calculate", "add calculate prompt"):
            row["calculation"] = "1"
        if QUESTION_TYPE_DICT.get(xls_type, {}).get("bind", {}).get("type") in (
                "int", "decimal") and xls_type != "range":
            row["constraint"] = ". >= 0 and . <= 5"
        path = xlsform(tmp_path / f"t{i}.xlsx", [USED, row], YES_NO + FREQ + SUBS,
                       {"form_id": "t", "version": 1})
        try:
            result = import_xlsform(path)
            outcomes[xls_type] = ("not a question" if len(result.survey.questions) == 1 else
                                  "imported " + result.survey.questions[-1].type)
        except ImportRefused as exc:
            assert all(p.alternative and p.reason for p in exc.problems), xls_type
            outcomes[xls_type] = "refused"
        except XlsFormError as exc:
            assert "pyxform cannot read" in exc.message, xls_type
            outcomes[xls_type] = "pyxform"
    assert {t: o for t, o in outcomes.items() if o != "refused"} == IMPORTED_TYPES


# --- the TOML, plan, and the command ---------------------------------------------------------


def test_the_toml_reads_back_to_the_same_survey(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"type": "note", "name": "intro", "label": 'Quotes " and \\ and a\nnew line \x7f'},
        USED,
        {"type": "select_one freq", "name": "freq.v2", "label": "How often?",
         "ldp_epsilon": 1, "relevant": "${used} = 'yes'", "required": "yes"}])
    assert tomllib.loads(result.toml) == result.data
    path = tmp_path / "s.toml"
    path.write_text(result.toml, encoding="utf-8")
    assert load_survey(path).sha256 == result.survey.sha256 == Survey.from_dict(
        result.data).sha256
    assert "# row 4: select_one freq 'freq.v2'" in result.toml
    assert "# XLSForm choice names: 1 = 'Never', 2 = 'Monthly'" in result.toml


def test_import_then_plan(tmp_path: Path) -> None:
    form = xlsform(tmp_path / "form.xlsx", [
        USED,
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1,
         "relevant": "${used} = 'yes'", "required": "yes"},
        {"type": "select_multiple subs", "name": "subs", "label": "Which?", "ldp_epsilon": 2,
         "constraint": "count-selected(.) <= 3"},
        {"type": "text", "name": "why", "label": "Why?"}], YES_NO + FREQ + SUBS,
        {"form_id": "habits", "version": 2, "form_title": "Habits"})
    out = tmp_path / "habits.toml"
    runner = CliRunner()
    res = runner.invoke(cli, ["import", "xlsform", str(form), "--out", str(out)])
    assert res.exit_code == 1 and not out.exists()
    assert "row 5 (why, text): free text cannot be randomized; offer a select_one list" in (
        res.stderr)
    assert "nothing was written" in res.stderr and "--skip-unsupported" in res.stderr
    res = runner.invoke(cli, ["import", "xlsform", str(form), "--out", str(out),
                              "--skip-unsupported"])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.stdout and "left out (1 row(s)" in res.stdout
    assert "row 5 (why, text)" in res.stdout
    plan = runner.invoke(cli, ["plan", str(out), "--margin", "0.05"])
    assert plan.exit_code == 0, plan.output
    assert "survey habits v2 (Habits)" in plan.stdout and "subs: multiselect" in plan.stdout
    again = runner.invoke(cli, ["import", "xlsform", str(form), "--out", str(out),
                                "--skip-unsupported"])
    assert again.exit_code == 1 and "exists: pass --force" in again.stderr
    forced = runner.invoke(cli, ["import", "xlsform", str(form), "--out", str(out),
                                 "--skip-unsupported", "--force"])
    assert forced.exit_code == 0


def test_the_plan_it_suggests_plans_integer_means_in_their_units(tmp_path: Path) -> None:
    """plan's --mean-margin defaults to --margin: '--margin 0.05' alone planned a 0..30 days
    question at +-0.05 days (millions of respondents). The suggested command, run as printed,
    plans its mean at a twentieth of the range."""
    form = xlsform(tmp_path / "form.xlsx", [
        USED, {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
               "required": "yes", "constraint": ". >= 0 and . <= 30"}], YES_NO,
        {"form_id": "days", "version": 1})
    out = tmp_path / "days.toml"
    res = CliRunner().invoke(cli, ["import", "xlsform", str(form), "--out", str(out)])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.stdout.splitlines() if x.startswith("next: "))
    assert line == f"next: ldpsurvey plan {out} --margin 0.05 --mean-margin 1.5"
    plan = CliRunner().invoke(cli, line.split()[2:])
    assert plan.exit_code == 0, plan.output
    assert "±1.5" in plan.stdout and "±0.05 " not in plan.stdout
    assert max(int(n.replace(",", "")) for n in re.findall(r"\s(\d[\d,]*)\s+±", plan.stdout)
               ) < 100_000


def test_a_csv_xlsform(tmp_path: Path) -> None:
    """pyxform's CSV layout: the sheet name in the first column, then that sheet's rows."""
    form = tmp_path / "form.csv"
    form.write_text("survey,type,name,label,ldp_epsilon,required\n"
                    ",select_one yn,used,Used?,1,yes\n"
                    ",integer,days,Days?,1,yes\n"
                    "choices,list_name,name,label\n"
                    ",yn,yes,Yes\n,yn,no,No\n"
                    "settings,form_id,version\n,csv-form,4\n", encoding="utf-8")
    with pytest.raises(ImportRefused) as info:
        import_xlsform(form)
    assert [(p.row, p.name) for p in info.value.problems] == [(3, "days")]
    form.write_text(form.read_text().replace(",integer,days,Days?,1,yes",
                                             ",integer,days,Days?,1,yes,. >= 0 and . <= 7")
                    .replace("ldp_epsilon,required", "ldp_epsilon,required,constraint"),
                    encoding="utf-8")
    result = import_xlsform(form)
    assert (result.survey.id, result.survey.version) == ("csv-form", 4)
    assert [q.type for q in result.survey.questions] == ["binary", "integer"]


DATA = Path(__file__).parents[1] / "data" / "xlsform"


def test_an_xls_xlsform_imports_as_its_xlsx(tmp_path: Path) -> None:
    """The legacy .xls the import accepts: health_safety_2025.xls, a BIFF8 copy of the .xlsx
    (tests/data/xlsform/make_health_safety_xls.py), gives the same survey and TOML (but for the
    file name in the header), through the command as through the library."""
    xls, xlsx = DATA / "health_safety_2025.xls", DATA / "health_safety_2025.xlsx"
    assert xls.read_bytes()[:8] == bytes.fromhex("d0cf11e0a1b11ae1")  # OLE2, not a zip
    old, new = import_xlsform(xlsx), import_xlsform(xls)
    assert new.toml == old.toml.replace(xlsx.name, xls.name)
    assert new.data == old.data and new.survey.sha256 == old.survey.sha256
    assert new.notes == old.notes and new.left_out == old.left_out == ()
    out = tmp_path / "survey.toml"
    res = CliRunner().invoke(cli, ["import", "xlsform", str(xls), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8") == new.toml


# --- hostile input: refused in words, never a traceback --------------------------------------

EXPRESSION_TEXT = st.text(alphabet=st.sampled_from(
    list("${}()'\". =!<>,-+*/[]@andornotselectedcount-q1x0 if")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(text=EXPRESSION_TEXT)
def test_any_relevant_is_translated_or_refused_in_words(text: str) -> None:
    from ldpsurvey.analyst.xlsform_import import expressions as xp

    targets = {"q1": xp.Target("q1", "binary", {}, yes="yes", no="no"),
               "x": xp.Target("x", "integer", {})}

    def lookup(name: str) -> xp.Target:
        if name not in targets:
            raise xp.ExpressionError(f"${{{name}}} is not a question of this form")
        return targets[name]

    try:
        tree = xp.parse(text)
        xp.translate_relevant(tree, lookup)
        xp.range_of(tree)
    except xp.ExpressionError as exc:
        assert exc.message


@settings(max_examples=25, deadline=None)
@given(cells=st.lists(st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=12)
                      | st.sampled_from(["select_one yn", "integer", "text", "begin_group",
                                         "${used} = 'yes'", ". >= 0 and . <= 3", "x", "1"]),
                      min_size=6, max_size=6))
def test_any_row_is_imported_or_refused_in_words(tmp_path_factory: Any,
                                                 cells: list[str]) -> None:
    columns = ["type", "name", "label", "relevant", "constraint", "ldp_epsilon"]
    row = dict(zip(columns, cells, strict=True))
    path = xlsform(tmp_path_factory.mktemp("hostile") / "form.xlsx", [USED, row],
                   YES_NO + FREQ, {"form_id": "t", "version": 1})
    try:
        import_xlsform(path)
    except (ImportRefused, XlsFormError) as exc:
        assert exc.message
