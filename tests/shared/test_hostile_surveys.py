"""Hostile survey files: `load_survey` either returns a Survey or raises SurveyError (never
another exception), and `ldpsurvey publish` answers a hostile file with one line and a non-zero
exit, never a traceback, before it contacts any server.

Generated: arbitrary JSON documents, the sample survey with any one value replaced by arbitrary
JSON (or removed), arbitrary bytes; hand-picked: malformed TOML/JSON, deep nesting, huge
numbers, NaN/Infinity, wrong types, unicode everywhere, huge option lists.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.manifest import generate_keypair
from ldpsurvey.shared.survey import Survey, load_survey
from support.timeouts import TEST_TIMEOUT

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

BASE: dict[str, Any] = {
    "id": "hostile", "title": "Hostile", "version": 1, "description": "d",
    "questions": [
        {"id": "smoker", "text": "Smoke?", "type": "binary", "epsilon": 1.0},
        {"id": "color", "text": "Colour?", "type": "categorical", "epsilon": 1.5,
         "options": ["red", "green", "blue"], "mechanism": "grr", "groups": {"warm": ["red"]}},
        {"id": "age", "text": "Age?", "type": "integer", "epsilon": 2.0, "min": 18, "max": 30,
         "mechanism": "geometric", "optional": True},
        {"id": "mood", "text": "Mood?", "type": "ordinal", "epsilon": 1.0,
         "options": ["low", "mid", "high"]},
    ],
}

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63)
           | st.floats() | st.text(max_size=30))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                           max_leaves=20)


def toml_value(value: Any) -> str:
    """A TOML literal for a JSON-like value (inline tables and arrays; TOML has no null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()
                               if v is not None) + "}"
    raise TypeError(type(value))


def toml_document(data: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in data.items()
                     if v is not None) + "\n"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes)
                     else content.encode("utf-8", "surrogatepass"))
    return path


def loads_or_survey_error(path: Path) -> Survey | None:
    """The property: a Survey, or a SurveyError naming a field (nothing else escapes)."""
    try:
        survey = load_survey(path)
    except SurveyError as exc:
        assert exc.message and isinstance(exc.field, str)
        return None
    assert isinstance(survey, Survey)
    survey.canonical_bytes()  # a loaded survey always has a canonical form
    return survey


@st.composite
def mutated_surveys(draw: st.DrawFn) -> dict[str, Any]:
    """BASE with one value anywhere replaced by arbitrary JSON, or one key removed."""
    data = copy.deepcopy(BASE)
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if path:
            paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*path, i))

    walk(data, ())
    path = draw(st.sampled_from(paths))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return data


@SETTINGS
@given(data=json_values)
def test_arbitrary_json_documents(tmp_path: Path, data: Any) -> None:
    text = json.dumps(data, ensure_ascii=False)  # may hold NaN/Infinity from st.floats()
    loads_or_survey_error(write(tmp_path, "s.json", text))


@SETTINGS
@given(data=mutated_surveys())
def test_one_value_replaced_json_and_toml(tmp_path: Path, data: dict[str, Any]) -> None:
    from_json = loads_or_survey_error(write(tmp_path, "s.json",
                                            json.dumps(data, ensure_ascii=False)))
    from_toml = loads_or_survey_error(write(tmp_path, "s.toml", toml_document(data)))
    if from_json is not None and from_toml is not None:
        assert from_json.canonical_bytes() == from_toml.canonical_bytes()


@SETTINGS
@given(raw=st.binary(max_size=300), suffix=st.sampled_from([".json", ".toml", ".yaml", ""]))
def test_arbitrary_bytes(tmp_path: Path, raw: bytes, suffix: str) -> None:
    loads_or_survey_error(write(tmp_path, "s" + suffix, raw))


def _question(**changes: Any) -> dict[str, Any]:
    return {**BASE, "questions": [{**BASE["questions"][1], **changes}]}


HOSTILE_JSON: dict[str, str] = {
    "truncated": json.dumps(BASE)[:-5],
    "trailing garbage": json.dumps(BASE) + "}",
    "NaN epsilon": json.dumps(BASE).replace('"epsilon": 1.5', '"epsilon": NaN'),
    "Infinity epsilon": json.dumps(BASE).replace('"epsilon": 1.5', '"epsilon": Infinity'),
    "1e999 epsilon": json.dumps(BASE).replace('"epsilon": 1.5', '"epsilon": 1e999'),
    "tiny epsilon": json.dumps(BASE).replace('"epsilon": 1.5', '"epsilon": 1e-320'),
    "huge version": json.dumps(BASE).replace('"version": 1', '"version": ' + "9" * 5000),
    "float version": json.dumps(BASE).replace('"version": 1', '"version": 1.0'),
    "huge bound": json.dumps(BASE).replace('"max": 30', '"max": ' + "9" * 400),
    "deep nesting": '{"id": "x", "questions": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep objects": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "array top": json.dumps([BASE]),
    "string top": json.dumps("survey"),
    "duplicate keys": json.dumps(BASE)[:-1] + ', "id": "other"}',
    "bom": "\ufeff" + json.dumps(BASE),
    "lone surrogate": json.dumps(BASE).replace("Hostile", "\\ud800"),
    "nul in id": json.dumps(BASE).replace('"hostile"', '"host\\u0000ile"'),
    "rtl override label": json.dumps(_question(options=["red", "\u202egreen", "blue"])),
    "huge option list": json.dumps(_question(options=[f"o{i}" for i in range(70_000)])),
    "many options auto": json.dumps(_question(options=[f"o{i}" for i in range(5000)],
                                              mechanism="auto")),
    "options not strings": json.dumps(_question(options=[1, 2, 3])),
    "options a dict": json.dumps(_question(options={"a": 1})),
    "groups wrong": json.dumps(_question(groups=[["red"]])),
    "epsilon string": json.dumps(_question(epsilon="1.5")),
    "epsilon bool": json.dumps(_question(epsilon=True)),
    "mechanism list": json.dumps(_question(mechanism=["grr"])),
    "params wrong": json.dumps(_question(params={"p": "NaN"})),
    "questions 10k": json.dumps({**BASE, "questions": BASE["questions"][:1] * 10_000}),
    "huge text": json.dumps({**BASE, "title": "x" * 1_000_000}),
}

HOSTILE_TOML: dict[str, str] = {
    "truncated": toml_document(BASE)[:-20],
    "duplicate key": toml_document(BASE) + 'id = "again"\n',
    "nan epsilon": toml_document(_question(epsilon=float("nan"))),
    "inf epsilon": toml_document(_question(epsilon=float("inf"))),
    "huge integer": toml_document(BASE).replace('"version" = 1', '"version" = ' + "9" * 30),
    "integer past 4300 digits": toml_document(BASE).replace('"version" = 1',
                                                            '"version" = ' + "9" * 5000),
    "date version": toml_document(BASE).replace('"version" = 1', '"version" = 1979-05-27'),
    "datetime epsilon": toml_document(BASE).replace('"epsilon" = 1.0',
                                                    '"epsilon" = 1979-05-27T07:32:00Z', 1),
    "deep arrays": 'questions = ' + "[" * 50_000 + "]" * 50_000 + "\n",
    "deep tables": 'a = ' + "{b = " * 20_000 + "1" + "}" * 20_000 + "\n",
    "bad escape": 'id = "\\q"\n',
    "unicode keys": toml_document({**BASE, "ïd": "x"}),
    "array of tables wrong": '[[questions]]\nid = 1\n[[questions.options]]\nx = 1\n',
    "huge option list": toml_document(_question(options=[f"o{i}" for i in range(70_000)])),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_hostile_json_files(tmp_path: Path, name: str) -> None:
    loads_or_survey_error(write(tmp_path, "s.json", HOSTILE_JSON[name]))


@pytest.mark.parametrize("name", sorted(HOSTILE_TOML))
def test_hostile_toml_files(tmp_path: Path, name: str) -> None:
    loads_or_survey_error(write(tmp_path, "s.toml", HOSTILE_TOML[name]))


def test_the_toml_writer_round_trips_the_base_survey(tmp_path: Path) -> None:
    from_toml = load_survey(write(tmp_path, "s.toml", toml_document(BASE)))
    assert from_toml.canonical_bytes() == Survey.from_dict(BASE).canonical_bytes()


@pytest.mark.parametrize("path", ["missing.json", "dir.json", "s.txt"])
def test_unreadable_or_unknown_files(tmp_path: Path, path: str) -> None:
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "s.txt").write_text(json.dumps(BASE))
    with pytest.raises(SurveyError):
        load_survey(tmp_path / path)


# --- ldpsurvey publish ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def key_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(generate_keypair(tmp_path_factory.mktemp("keys"))[0])


def publish(path: Path, key: str) -> Any:
    # Port 9 on loopback: nothing listens, but a hostile file must fail before any request.
    return CliRunner().invoke(cli, ["publish", str(path), "--server", "http://127.0.0.1:9",
                                    "--token", "ldp_x", "--key", key])


def assert_one_line_error(result: Any) -> None:
    assert result.exit_code not in (0, None), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    assert "cannot reach" not in lines[0]  # refused before contacting the server


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_publish_refuses_hostile_json_in_one_line(tmp_path: Path, key_path: str,
                                                  name: str) -> None:
    path = write(tmp_path, "s.json", HOSTILE_JSON[name])
    if loads_or_survey_error(path) is not None:
        pytest.skip("this file is a valid survey")  # e.g. unicode labels are fine
    assert_one_line_error(publish(path, key_path))


@pytest.mark.parametrize("name", sorted(HOSTILE_TOML))
def test_publish_refuses_hostile_toml_in_one_line(tmp_path: Path, key_path: str,
                                                  name: str) -> None:
    path = write(tmp_path, "s.toml", HOSTILE_TOML[name])
    if loads_or_survey_error(path) is not None:
        pytest.skip("this file is a valid survey")
    assert_one_line_error(publish(path, key_path))


@SETTINGS
@given(data=mutated_surveys())
def test_publish_refuses_generated_files_in_one_line(tmp_path: Path, key_path: str,
                                                     data: dict[str, Any]) -> None:
    path = write(tmp_path, "s.json", json.dumps(data, ensure_ascii=False))
    if loads_or_survey_error(path) is None:
        assert_one_line_error(publish(path, key_path))


@pytest.mark.parametrize("content", [b"", b"not a key", b"-----BEGIN PRIVATE KEY-----\nAAAA\n"
                                     b"-----END PRIVATE KEY-----\n", bytes(range(256))])
def test_publish_refuses_a_hostile_key_file_in_one_line(tmp_path: Path, content: bytes) -> None:
    survey = write(tmp_path, "s.json", json.dumps(BASE))
    key = write(tmp_path, "k.key", content)
    assert_one_line_error(publish(survey, str(key)))


def test_real_process_prints_no_traceback(tmp_path: Path, key_path: str) -> None:
    """The console script itself (not CliRunner): stderr is one line, the exit status 1."""
    path = write(tmp_path, "s.json", HOSTILE_JSON["deep nesting"])
    exe = Path(sys.executable).parent / "ldpsurvey"
    proc = subprocess.run([str(exe), "publish", str(path), "--server", "http://127.0.0.1:9",
                           "--token", "ldp_x", "--key", key_path],
                          capture_output=True, text=True, timeout=TEST_TIMEOUT)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr
