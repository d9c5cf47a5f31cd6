"""`import xlsform --media PATH` (analyst/xlsform_import/media.py; docs/xlsform.md, "Choices
from attached files"): a select_one_from_file / select_multiple_from_file row takes its choices
from the form's attached .csv (name, label, label::Language (xx), other columns for a
choice_filter), .xml or .geojson, read at import and signed with the survey; without the file
the row is left out as before, the reason naming the file and the option; a file that cannot
be read as choices leaves the row out as one to fix, with its reason, and nothing is written
without --skip-unsupported. The real UCL plot form imports its region, district and village
cascade from synthesized attachments."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.xlsform_import import (
    FIX,
    UNSUPPORTED,
    ImportOptions,
    ImportRefused,
    XlsFormError,
    import_xlsform,
)
from ldpsurvey.shared.survey import Survey
from support.xlsform import YES_NO, xlsform

SETTINGS = {"form_id": "t", "version": 1}
PLACE = {"type": "select_one_from_file places.csv", "name": "place", "label": "Where?",
         "ldp_epsilon": 1}
PLACES = "name,label,region\nnai,Nairobi,central\nmsa,Mombasa,coast\nkis,Kisumu,west\n"


def form(tmp_path: Path, survey: list[dict[str, Any]],
         choices: list[dict[str, Any]] | None = None,
         settings: dict[str, Any] | None = None) -> Path:
    return xlsform(tmp_path / "form.xlsx", survey, YES_NO if choices is None else choices,
                   settings or SETTINGS)


def attached(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    """A folder of attachments, as ODK Central lists a form's media."""
    folder = tmp_path / "media"
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        path = folder / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    return folder


def imported(tmp_path: Path, survey: list[dict[str, Any]], files: dict[str, str | bytes],
             choices: list[dict[str, Any]] | None = None,
             settings: dict[str, Any] | None = None, **options: Any) -> Any:
    path = form(tmp_path, survey, choices, settings)
    return import_xlsform(path, ImportOptions(media=(attached(tmp_path, files),), **options))


def refused(tmp_path: Path, survey: list[dict[str, Any]], files: dict[str, str | bytes]
            ) -> list[Any]:
    with pytest.raises(ImportRefused) as info:
        imported(tmp_path, survey, files)
    return list(info.value.problems)


def question(result: Any, qid: str) -> dict[str, Any]:
    return next(q for q in result.data["questions"] if q["id"] == qid)


# --- choices from a CSV ----------------------------------------------------------------------


def test_a_select_one_from_file_takes_its_options_from_the_attached_csv(tmp_path: Path) -> None:
    result = imported(tmp_path, [PLACE], {"places.csv": PLACES})
    q = question(result, "place")
    assert (q["type"], q["options"]) == ("categorical", ["Nairobi", "Mombasa", "Kisumu"])
    survey = Survey.from_dict(result.data)  # the options are the signed survey's own
    assert survey.question("place").options == ("Nairobi", "Mombasa", "Kisumu")
    assert "read from the attached file places.csv (sha256 " in result.toml
    assert any(n.startswith("row 2 (place, select_one_from_file places.csv): its 3 choice(s) "
                            "are read from the attached file places.csv") for n in result.notes)
    assert result.counts.summary() == "kept 1 of 1 rows: 1 select_one_from_file"


def test_the_files_bytes_are_the_options_whatever_the_folder_holds_later(tmp_path: Path) -> None:
    """Nothing is fetched at answer time: the TOML holds the options and the file's sha256."""
    import hashlib

    result = imported(tmp_path, [PLACE], {"places.csv": PLACES})
    (tmp_path / "media" / "places.csv").unlink()
    assert tomllib.loads(result.toml)["questions"][0]["options"] == ["Nairobi", "Mombasa",
                                                                     "Kisumu"]
    assert hashlib.sha256(PLACES.encode()).hexdigest() in result.toml


def test_a_select_multiple_from_file_is_a_multiselect(tmp_path: Path) -> None:
    row = {**PLACE, "type": "select_multiple_from_file places.csv"}
    q = question(imported(tmp_path, [row], {"places.csv": PLACES}), "place")
    assert (q["type"], q["options"]) == ("multiselect", ["Nairobi", "Mombasa", "Kisumu"])


def test_label_language_columns_are_the_translations(tmp_path: Path) -> None:
    survey = [{"type": "select_one_from_file places.csv", "name": "place",
               "label::English (en)": "Where?", "label::Kiswahili (sw)": "Wapi?",
               "ldp_epsilon": 1}]
    files = {"places.csv": "name,label::English (en),label::Kiswahili (sw),label::Français "
                           "(fr)\nlake,Lake,Ziwa,Lac\ncoast,Coast,Pwani,Côte\n"}
    result = imported(tmp_path, survey, files,
                      settings={**SETTINGS, "default_language": "English (en)"})
    q = question(result, "place")
    assert q["options"] == ["Lake", "Coast"]
    assert result.data["translations"]["sw"]["questions"]["place"]["options"] == {
        "Lake": "Ziwa", "Coast": "Pwani"}
    assert any("places.csv's label columns in 'Français (fr)', a language the form does not "
               "have, are not read" in n for n in result.notes)


def test_parameters_value_and_label_name_the_columns(tmp_path: Path) -> None:
    row = {**PLACE, "parameters": "value=code label=town"}
    files = {"places.csv": "code,town,name\n1,Nairobi,x\n2,Mombasa,y\n"}
    result = imported(tmp_path, [row], files)
    assert question(result, "place")["options"] == ["Nairobi", "Mombasa"]
    assert "XLSForm choice names: 1 = 'Nairobi', 2 = 'Mombasa'" in result.toml


def test_a_choice_filter_over_the_files_columns_is_the_questions_filter(tmp_path: Path) -> None:
    """The cascade of the UCL form, region -> place, both from attached files."""
    survey = [{"type": "select_one_from_file regions.csv", "name": "region",
               "label": "Region?", "ldp_epsilon": 1},
              {**PLACE, "choice_filter": "region=${region}"}]
    files = {"regions.csv": "name,label\ncentral,Central\ncoast,Coast\nwest,West\n",
             "places.csv": PLACES}
    q = question(imported(tmp_path, survey, files), "place")
    assert q["filter"] == {"by": "region", "values": {"Nairobi": ["Central"],
                                                      "Mombasa": ["Coast"],
                                                      "Kisumu": ["West"]}}


def test_a_filter_column_naming_no_choice_of_the_earlier_answer_is_refused(
        tmp_path: Path) -> None:
    survey = [{"type": "select_one_from_file regions.csv", "name": "region",
               "label": "Region?", "ldp_epsilon": 1},
              {**PLACE, "choice_filter": "region=${region}"}]
    files = {"regions.csv": "name,label\ncentral,Central\ncoast,Coast\n",
             "places.csv": PLACES}
    (problem,) = refused(tmp_path, survey, files)
    assert problem.name == "place" and "'west' for the choice 'kis' is not a choice of " \
        "'region'" in problem.reason


# --- XML and GeoJSON -----------------------------------------------------------------------


def test_an_xml_itemset_and_a_geojson_feature_collection_are_read(tmp_path: Path) -> None:
    xml = ('<?xml version="1.0" encoding="UTF-8"?>'
           "<root><item><name>a</name><label>Alpha</label></item>"
           "<item><name>b</name><label>Beta</label></item></root>")
    geojson = json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": "p1", "geometry": {"type": "Point", "coordinates": [1, 2]},
         "properties": {"title": "Plot one", "zone": 3}},
        {"type": "Feature", "geometry": None,
         "properties": {"id": "p2", "title": "Plot two", "zone": 4}}]})
    survey = [{"type": "select_one_from_file letters.xml", "name": "letter", "label": "L?",
               "ldp_epsilon": 1},
              {"type": "select_one_from_file plots.geojson", "name": "plot", "label": "P?",
               "ldp_epsilon": 1}]
    result = imported(tmp_path, survey, {"letters.xml": xml, "plots.geojson": geojson})
    assert question(result, "letter")["options"] == ["Alpha", "Beta"]
    assert question(result, "plot")["options"] == ["Plot one", "Plot two"]
    assert "the features' geometry is not read (a list is shown, not a map)" in result.toml


@pytest.mark.parametrize(("name", "data", "says"), [
    ("x.xml", "<root><item><name>a</name><label><b>A</b></label></item></root>",
     "item 1's <label> is not a plain value: ODK's itemset is a flat list"),
    ("x.xml", "<root><item><name>a</name>", "it is not well-formed XML"),
    ("x.xml", '<!DOCTYPE r [<!ENTITY e "x">]><root><item><name>&e;</name></item></root>',
     "it declares a DOCTYPE or entities"),
    ("x.geojson", '{"type": "Feature", "properties": {}}', "not a GeoJSON FeatureCollection"),
    ("x.geojson", "{", "it is not JSON"),
    ("x.geojson", '{"type": "FeatureCollection", "features": [{"properties": {"title": "A"}}]}',
     "feature 1 has no id"),
])
def test_an_xml_or_geojson_file_odk_would_not_read_as_an_itemset_is_refused_by_row(
        tmp_path: Path, name: str, data: str, says: str) -> None:
    row = {**PLACE, "type": f"select_one_from_file {name}"}
    (problem,) = refused(tmp_path, [row], {name: data})
    assert (problem.row, problem.name, problem.kind) == (2, "place", FIX)
    assert problem.reason.startswith(f"its options are in the attached file {name!r}, but ")
    assert says in problem.reason


# --- without the file, and files that cannot be read -----------------------------------------


def test_without_media_the_row_is_left_out_naming_the_file_and_the_option(
        tmp_path: Path) -> None:
    path = form(tmp_path, [{**PLACE, "name": "kept", "type": "select_one yn"}, PLACE])
    result = import_xlsform(path, ImportOptions(skip_unsupported=True))
    (problem,) = result.left_out
    assert (problem.row, problem.name, problem.kind) == (3, "place", UNSUPPORTED)
    assert problem.reason == ("its options are in the file 'places.csv', which the import was "
                              "not given (no --media): a signed survey holds its options")
    assert problem.alternative.startswith("pass --media DIR with the form's attached "
                                          "places.csv")


def test_a_file_missing_from_the_media_folder_is_said_with_the_folder(tmp_path: Path) -> None:
    (problem,) = refused(tmp_path, [PLACE], {"other.csv": PLACES})
    assert problem.kind == UNSUPPORTED
    assert f"'places.csv', which is not among the --media files ({tmp_path / 'media'})" in \
        problem.reason


@pytest.mark.parametrize(("data", "says"), [
    (b"", "it is empty (no header row naming its columns)"),
    ("name,label\n", "it has no choices (ODK would show an empty list)"),
    ("code,label\n1,One\n", "it has no 'name' column, the choices' values (its columns: "
                            "'code', 'label')"),
    ("name,label\na,One\nb,Two\na,Three\n", "the name 'a' is on line 2 and line 4 (two "
                                            "choices of one value cannot be told apart)"),
    ("name,label\na,One\n,Two\n", "line 3 has no name"),
    ("name,label,name\na,One,b\n", "its header names 'name' twice"),
    ("name,label\nn\xe9,One\n".encode("latin-1"), "it is not UTF-8 text"),
])
def test_a_csv_that_cannot_be_read_as_choices_is_a_row_to_fix(
        tmp_path: Path, data: str | bytes, says: str) -> None:
    (problem,) = refused(tmp_path, [PLACE], {"places.csv": data})
    assert (problem.row, problem.name, problem.kind) == (2, "place", FIX)
    assert problem.reason.startswith("its options are in the attached file 'places.csv', but ")
    assert says in problem.reason
    assert problem.alternative == "correct the attached file and import again"


def test_an_unreadable_csv_is_a_row_to_fix(tmp_path: Path, monkeypatch: Any) -> None:
    folder = attached(tmp_path, {"places.csv": PLACES})

    read_bytes = Path.read_bytes

    def denied(self: Path) -> bytes:  # as for a file the user may not read (tests run as root)
        if self.name == "places.csv":
            raise PermissionError(13, "Permission denied")
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(ImportRefused) as info:
        import_xlsform(form(tmp_path, [PLACE]), ImportOptions(media=(folder,)))
    (problem,) = info.value.problems
    assert problem.kind == FIX and "it cannot be read (Permission denied)" in problem.reason


def test_a_parameters_label_column_the_file_lacks_is_a_row_to_fix(tmp_path: Path) -> None:
    (problem,) = refused(tmp_path, [{**PLACE, "parameters": "label=town"}],
                         {"places.csv": PLACES})
    assert problem.kind == FIX and "it has no 'town' column" in problem.reason


def test_a_csv_without_a_label_column_shows_each_choice_by_its_name(tmp_path: Path) -> None:
    result = imported(tmp_path, [PLACE], {"places.csv": "name\nnai\nmsa\n"})
    assert question(result, "place")["options"] == ["nai", "msa"]
    assert any("shown by their name: nai, msa" in n for n in result.notes)


def test_the_cli_writes_nothing_for_a_file_to_fix_and_says_one_line_for_a_missing_path(
        tmp_path: Path) -> None:
    path, out = form(tmp_path, [PLACE]), tmp_path / "s.toml"
    folder = attached(tmp_path, {"places.csv": "name,label\na,One\na,Two\n"})
    runner = CliRunner()
    res = runner.invoke(cli, ["import", "xlsform", str(path), "--out", str(out),
                              "--media", str(folder)])
    assert res.exit_code == 1 and not out.exists()
    assert "row 2 (place, select_one_from_file places.csv): its options are in the attached " \
           "file 'places.csv', but the name 'a' is on line 2 and line 3" in res.output
    res = runner.invoke(cli, ["import", "xlsform", str(path), "--out", str(out),
                              "--media", str(tmp_path / "nowhere")])
    assert res.exit_code == 1 and not out.exists()
    assert res.output.strip().splitlines() == [
        f"Error: --media {tmp_path / 'nowhere'}: no such file or folder"]


def test_media_takes_files_and_folders_but_not_two_files_of_one_name(tmp_path: Path) -> None:
    one = attached(tmp_path, {"places.csv": PLACES})
    other = tmp_path / "other"
    other.mkdir()
    (other / "places.csv").write_text("name,label\nx,X\n")
    path = form(tmp_path, [PLACE])
    result = import_xlsform(path, ImportOptions(media=(one / "places.csv",)))
    assert question(result, "place")["options"] == ["Nairobi", "Mombasa", "Kisumu"]
    result = import_xlsform(path, ImportOptions(media=(one, one / "places.csv")))  # same file
    assert question(result, "place")["options"] == ["Nairobi", "Mombasa", "Kisumu"]
    with pytest.raises(XlsFormError, match=r"--media: two files named 'places\.csv'"):
        import_xlsform(path, ImportOptions(media=(one, other)))


def test_the_cli_imports_with_media_and_says_where_the_options_come_from(
        tmp_path: Path) -> None:
    path, out = form(tmp_path, [PLACE]), tmp_path / "s.toml"
    folder = attached(tmp_path, {"places.csv": PLACES})
    res = CliRunner().invoke(cli, ["import", "xlsform", str(path), "--out", str(out),
                                   "--media", str(folder)])
    assert res.exit_code == 0, res.output
    assert tomllib.loads(out.read_text())["questions"][0]["options"] == [
        "Nairobi", "Mombasa", "Kisumu"]
    assert "note: row 2 (place, select_one_from_file places.csv): its 3 choice(s) are read " \
           "from the attached file places.csv" in res.output
