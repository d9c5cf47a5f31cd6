"""`${name}` in an XLSForm label, hint or choice label (docs/xlsform.md, "Piped labels";
docs/piping.md): imported as a piped text when the name is a question imported before the
row; otherwise the row is refused (or left out with --skip-unsupported) with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ldpsurvey.analyst.xlsform_import import (
    FIX,
    UNSUPPORTED,
    ImportOptions,
    ImportRefused,
    import_xlsform,
)
from support.xlsform import YES_NO, xlsform

SUBS = [{"list_name": "subs", "name": "cannabis", "label::English (en)": "cannabis",
         "label::Español (es)": "cannabis"},
        {"list_name": "subs", "name": "cocaine", "label::English (en)": "cocaine",
         "label::Español (es)": "cocaína"}]
HOW = [{"list_name": "how", "name": "smoked", "label::English (en)": "smoked ${drug}",
        "label::Español (es)": "fumó ${drug}"},
       {"list_name": "how", "name": "other", "label::English (en)": "another way",
        "label::Español (es)": "de otra forma"}]
YN = [{**c, "label::English (en)": c["label"], "label::Español (es)": c["label"]}
      for c in YES_NO]
DRUG = {"type": "select_one subs", "name": "drug", "label::English (en)": "Which one?",
        "label::Español (es)": "¿Cuál?", "required": "yes", "ldp_epsilon": 1}
USED = {"type": "select_one yn", "name": "used",
        "label::English (en)": "Have you used ${drug} this month?",
        "label::Español (es)": "¿Ha consumido ${drug} este mes?",
        "hint::English (en)": "Only ${drug}.", "hint::Español (es)": "Solo ${drug}.",
        "required": "yes", "ldp_epsilon": 1}
HOW_ROW = {"type": "select_one how", "name": "how", "label::English (en)": "How?",
           "label::Español (es)": "¿Cómo?", "required": "yes", "ldp_epsilon": 1}


def run(tmp_path: Path, survey: list[dict[str, Any]], **options: Any) -> Any:
    how = HOW if any(row.get("type") == "select_one how" for row in survey) else []
    path = xlsform(tmp_path / "form.xlsx", survey, [*YN, *SUBS, *how],
                   {"form_id": "piped", "version": 1, "default_language": "English (en)"})
    return import_xlsform(path, ImportOptions(**options))


def refused(tmp_path: Path, survey: list[dict[str, Any]]) -> list[Any]:
    with pytest.raises(ImportRefused) as info:
        run(tmp_path, survey)
    return list(info.value.problems)


def test_labels_hints_and_choices_naming_an_earlier_question_import_as_piped_texts(
        tmp_path: Path) -> None:
    result = run(tmp_path, [DRUG, USED, HOW_ROW])
    survey = result.survey
    assert survey.question("used").text == "Have you used ${drug} this month?"
    assert survey.question("used").hint == "Only ${drug}."
    assert survey.question("how").options == ("smoked ${drug}", "another way")
    es = survey.translations["es"].questions
    assert es["used"].text == "¿Ha consumido ${drug} este mes?"
    assert es["used"].hint == "Solo ${drug}."
    assert es["how"].options["smoked ${drug}"] == "fumó ${drug}"
    assert result.left_out == ()
    assert result.counts.piped == 2
    assert "(2 of them with a piped text (an earlier answer shown on the device))" in (
        result.counts.summary())


@pytest.mark.parametrize(("rows", "kind", "reason", "alternative"), [
    # a row that is not imported: free text
    ([{"type": "text", "name": "who", "label::English (en)": "Name?",
       "label::Español (es)": "¿Nombre?"},
      {**DRUG, "label::English (en)": "Which one, ${who}?"}],
     UNSUPPORTED, "its text shows ${who} (row 2, text), which is not imported",
     "import that row, or write the text without ${who}"),
    # a later question
    ([{**DRUG, "hint::English (en)": "As in ${used}"}, {**USED, "label::English (en)": "U?",
                                                        "hint::English (en)": ""}],
     UNSUPPORTED, "its text shows ${used}, which comes later in the form",
     "move ${used} before this row"),
    # a row that needs fixing (no ε)
    ([{**DRUG, "ldp_epsilon": None}, USED],
     FIX, "its text shows ${drug} (row 2, select_one subs), which needs fixing",
     "fix that row first"),
    # its own answer (a cycle)
    ([{**DRUG, "label::Español (es)": "¿${drug}?"}],
     UNSUPPORTED, "its text shows its own answer (${drug})", "without ${drug}"),
])
def test_a_reference_to_no_earlier_imported_question_refuses_the_row_with_the_reason(
        tmp_path: Path, rows: list[dict[str, Any]], kind: str, reason: str,
        alternative: str) -> None:
    problems = refused(tmp_path, rows)
    piped = [p for p in problems if reason in p.reason]
    assert len(piped) == 1, [p.reason for p in problems]
    assert piped[0].kind == kind and alternative in piped[0].alternative


def test_a_row_whose_text_shows_a_row_left_out_goes_with_it_under_skip_unsupported(
        tmp_path: Path) -> None:
    rows = [{"type": "text", "name": "who", "label::English (en)": "Name?",
             "label::Español (es)": "¿Nombre?"},
            {**DRUG, "label::English (en)": "Which one, ${who}?"}, USED,
            {**HOW_ROW, "type": "select_one yn"}]
    result = run(tmp_path, rows, skip_unsupported=True)
    # drug shows `who` (free text, left out) and `used` shows drug: both go; `how` stays
    assert [q.id for q in result.survey.questions] == ["how"]
    assert [(p.name, p.kind) for p in result.left_out] == [
        ("who", UNSUPPORTED), ("drug", UNSUPPORTED), ("used", UNSUPPORTED)]
    assert "its text shows ${drug} (row 3, select_one subs)" in result.left_out[2].reason
    assert result.counts.piped == 0


def test_a_question_the_survey_check_refuses_takes_the_texts_that_show_it(
        tmp_path: Path) -> None:
    """A question Survey.from_dict refuses (validation.py: an unknown mechanism); a later
    question whose label shows it goes with it, saying so. (An optional follow-up of a
    randomized answer is no longer refused there: it is imported as required.)"""
    rows = [{**DRUG, "ldp_mechanism": "nope", "relevant": "${used0} = 'yes'"},
            {**USED, "label::Español (es)": "¿${drug}?"}]
    rows.insert(0, {"type": "select_one yn", "name": "used0", "label::English (en)": "Ever?",
                    "label::Español (es)": "¿Alguna vez?", "required": "yes",
                    "ldp_epsilon": 1})
    result = run(tmp_path, rows, skip_unsupported=True)
    assert [q.id for q in result.survey.questions] == ["used0"]
    (shows,) = [p for p in result.left_out if p.name == "used"]
    assert shows.reason.startswith("its text shows ${drug} (row 3, select_one subs), which "
                                   "needs fixing")
    assert shows.kind == FIX


@pytest.mark.parametrize(("constraint", "low", "high"), [
    ("1<=.<=6", 1, 6), ("1 < . < 6", 2, 5), ("6 >= . >= 1", 1, 6), ("-3<=.<6", -3, 5)])
def test_a_chained_range_constraint_is_the_range_it_writes_said_in_the_notes(
        tmp_path: Path, constraint: str, low: int, high: int) -> None:
    """The ODK docs' form-update example writes `1<=.<=6`: XPath reads `(1 <= .) <= 6`, always
    true, so ODK enforces nothing; the import keeps the range the designer wrote (and says
    so) instead of leaving the row out as an integer without a range."""
    result = run(tmp_path, [{"type": "integer", "name": "n", "label::English (en)": "N?",
                             "label::Español (es)": "¿N?", "constraint": constraint,
                             "required": "yes", "ldp_epsilon": 1}])
    (q,) = result.data["questions"]
    assert (q["min"], q["max"]) == (low, high)
    assert any(f"is imported as the range {low} to {high} it writes" in n for n in result.notes)
    assert f"range {low} to {high} it writes" in result.toml  # the question's comment


@pytest.mark.parametrize("constraint", ["1<=.>=6", ". <= 6 <= 7", "1 <= . <= 6 <= 9"])
def test_other_chains_are_still_refused(tmp_path: Path, constraint: str) -> None:
    problems = refused(tmp_path, [{"type": "integer", "name": "n", "label::English (en)": "N?",
                                   "label::Español (es)": "¿N?", "constraint": constraint,
                                   "ldp_epsilon": 1}])
    assert [p.name for p in problems] == ["n"] and "not a range" in problems[0].reason


def test_a_text_showing_a_row_outside_the_selection_says_to_select_it(tmp_path: Path) -> None:
    from ldpsurvey.analyst.xlsform_import import Selection

    rows = [DRUG, {"type": "begin_group", "name": "module", "label::English (en)": "M",
                   "label::Español (es)": "M"}, USED, {"type": "end_group"}]
    with pytest.raises(ImportRefused) as info:
        run(tmp_path, rows, selection=Selection(groups=("module",)))
    (problem,) = info.value.problems
    assert problem.name == "used" and problem.kind == UNSUPPORTED
    assert "its text shows ${drug} (row 2, select_one subs), which is outside the selection" in (
        problem.reason)
    assert "select that row too" in problem.alternative
    result = run(tmp_path, [{**DRUG, "sensitive": "yes"}, *rows[1:]],
                 selection=Selection(groups=("module",), marked="sensitive"))
    assert [q.id for q in result.survey.questions] == ["drug", "used"]
