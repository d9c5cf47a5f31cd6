"""XLSForm import of "don't know" / "prefer not to say" (analyst/xlsform_import/special.py):
select_one dk / refuse choices and an integer's -999-style codes become special values; a
select_multiple keeps them as options; a two-server survey and a disclosed question keep the
form's choices as options (they take no special values yet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ldpsurvey.analyst.xlsform_import import ImportOptions, import_xlsform
from ldpsurvey.shared.conditions import parse_condition
from support.xlsform import xlsform

CHOICES = [
    *({"list_name": "yn", "name": n, "label": label, "label::French (fr)": fr}
      for n, label, fr in [("yes", "Yes", "Oui"), ("no", "No", "Non"),
                           ("dnk", "Don't know", "Ne sait pas"),
                           ("pnta", "Prefer not to answer", "Préfère ne pas répondre")]),
    *({"list_name": "freq", "name": n, "label": label, "label::French (fr)": label}
      for n, label in [("never", "Never"), ("often", "Often"), ("dont_know", "Don't know")]),
    *({"list_name": "need", "name": n, "label": label, "label::French (fr)": label}
      for n, label in [("water", "Water"), ("food", "Food"), ("dk", "Don't know")]),
]


def run(tmp_path: Path, survey: list[dict[str, Any]], **options: Any) -> Any:
    rows = [{"label::French (fr)": row["label"], **row} for row in survey]
    path = xlsform(tmp_path / "form.xlsx", rows, CHOICES, {"form_id": "t", "version": 1})
    return import_xlsform(path, ImportOptions(**options))


def test_dk_choices_and_codes_become_special_values(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"type": "select_one yn", "name": "used", "label": "Used?", "ldp_epsilon": 1},
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1},
        {"type": "select_multiple need", "name": "need", "label": "Needs?", "ldp_epsilon": 1},
        {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
         "constraint": ". = -999 or (. >= 0 and . <= 20)"},
        {"type": "integer", "name": "kids", "label": "Children?", "ldp_epsilon": 1,
         "constraint": "(. >= 0 and . <= 12) or (.=-999) or . = -888"},
        {"type": "select_one yn", "name": "told", "label": "Told?", "ldp_disclosed": "yes"},
    ])
    q = {d["id"]: d for d in result.data["questions"]}
    # a yes/no list with dk and pnta is a yes/no question with two special values
    assert q["used"]["type"] == "binary"
    assert q["used"]["special"] == {"dnk": "Don't know", "pnta": "Prefer not to answer"}
    assert q["freq"]["options"] == ["Never", "Often"]
    assert q["freq"]["special"] == {"dont_know": "Don't know"}
    assert q["need"]["options"] == ["Water", "Food", "Don't know"] and "special" not in q["need"]
    assert (q["days"]["min"], q["days"]["max"]) == (0, 20)
    assert q["days"]["special"] == {"dont_know": "Don't know"}
    assert q["kids"]["special"] == {"dont_know": "Don't know", "refused": "Prefer not to say"}
    assert "special" not in q["told"] and "Don't know" in q["told"]["options"]
    survey = result.survey  # it parses: each special value randomized with the answers
    assert survey.question("used").labels[-2:] == ("Don't know", "Prefer not to answer")
    assert survey.question("days").mechanism == "asked_geometric"
    fr = survey.translations["fr"].questions["used"].options
    assert fr["Don't know"] == "Ne sait pas"
    assert "XLSForm code -999 = \"Don't know\"" in result.toml
    assert "choice dnk = \"Don't know\"" in result.toml


def test_a_two_server_survey_keeps_the_choices_as_options(tmp_path: Path) -> None:
    from ldpsurvey.shared.two_server.config import b64url

    rows = [{"type": "select_one freq", "name": "freq", "label": "How often?",
             "label::French (fr)": "Fréquence ?", "required": "yes"}]
    settings = {"form_id": "t", "version": 1, "collection": "two-server",
                "helper_url": "https://helper.example", "helper_hpke_key": b64url(b"h" * 32),
                "leader_hpke_key": b64url(b"l" * 32), "min_batch_size": 100}
    path = xlsform(tmp_path / "form.xlsx", rows, CHOICES, settings)
    result = import_xlsform(path, ImportOptions(epsilon=0.5))
    freq = result.data["questions"][0]
    assert freq["options"] == ["Never", "Often", "Don't know"] and "special" not in freq


def test_a_choice_a_condition_reads_stays_an_option(tmp_path: Path) -> None:
    """ldpsurvey's conditions compare options: a dk choice a later relevant reads stays one,
    so the follow-up keeps its condition (the MSNA's rows that read 'pnta' or 'dnk')."""
    result = run(tmp_path, [
        {"type": "select_one freq", "name": "freq", "label": "How often?", "ldp_epsilon": 1},
        {"type": "select_one yn", "name": "why", "label": "Unsure?", "ldp_epsilon": 1,
         "relevant": "selected(${freq}, 'dont_know')", "required": "yes"},
    ])
    q = {d["id"]: d for d in result.data["questions"]}
    assert q["freq"]["options"] == ["Never", "Often", "Don't know"]
    assert "special" not in q["freq"] and q["why"]["relevant"]
    assert q["why"]["special"] == {"dnk": "Don't know", "pnta": "Prefer not to answer"}


def test_a_yes_relevant_on_a_yes_no_list_with_dk_is_false_for_dk(tmp_path: Path) -> None:
    """`${used} = 'yes'` on a yes/no list with dk and pnta choices is false for a dk answer in
    ODK; the import writes `used == true`, and the bare `used` means the same (a special value
    is not a yes), so either holds for yes alone."""
    result = run(tmp_path, [
        {"type": "select_one yn", "name": "used", "label": "Used?", "ldp_epsilon": 1},
        {"type": "integer", "name": "days", "label": "Days?", "ldp_epsilon": 1,
         "constraint": ". >= 0 and . <= 20", "relevant": "${used} = 'yes'"},
        {"type": "integer", "name": "why", "label": "Why not?", "ldp_epsilon": 1,
         "constraint": ". >= 0 and . <= 20", "relevant": "${used} != 'yes'"},
    ])
    survey = result.survey
    assert survey.question("days").relevant == "used == true"
    bare = parse_condition("used", survey.questions, 1)
    for answer, yes in ((True, True), (False, False), ("Don't know", False),
                        ("Prefer not to answer", False)):
        assert survey.question("days").condition.evaluate({"used": answer}) is yes
        assert bare.evaluate({"used": answer}) is yes
        assert survey.question("why").condition.evaluate({"used": answer}) is (not yes)
