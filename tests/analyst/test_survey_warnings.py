"""`plan` and `publish` warn about a survey its respondents would refuse or could not answer on
a phone (issue 32: the location example planned and published at ε = 13.2 without a word, and
every respondent with the default limit of 5 refused it)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.commands import publish as publish_cli
from ldpsurvey.analyst.survey_warnings import survey_warnings
from ldpsurvey.client.budget import DEFAULT_MAX_EPSILON, Budget
from ldpsurvey.client.errors import PolicyError
from ldpsurvey.shared.manifest import generate_keypair
from ldpsurvey.shared.survey import Survey

ROOT = Path(__file__).resolve().parents[2]
PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\xdac\xfc\xff\x9f\xa1\x1e\x00\x07\x82\x02\x7f=\xc8H"
    b"\xef\x00\x00\x00\x00IEND\xaeB`\x82").decode()


def binary_survey(*epsilons: float) -> dict[str, Any]:
    return {"id": "s", "title": "S", "version": 1, "questions": [
        {"id": f"q{i}", "text": "?", "type": "binary", "epsilon": e}
        for i, e in enumerate(epsilons)]}


def location_survey(**extra: Any) -> dict[str, Any]:
    return {"id": "geo", "title": "Geo", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 0.5,
         "grid": {"rows": 3, "cols": 3, "cell_km": 1.0}, **extra}]}


def refused_by_default(survey: Survey) -> bool:
    try:
        Budget().check(survey)
    except PolicyError:
        return True
    return False


@pytest.mark.parametrize("epsilons", [(2.5, 2.5), (2.5, 2.51), (1.0,), (5.01,), (3.0, 3.0)])
def test_the_limit_warning_comes_exactly_when_default_devices_refuse(epsilons) -> None:
    survey = Survey.from_dict(binary_survey(*epsilons))
    warned = [w for w in survey_warnings(survey) if "default limit" in w]
    assert bool(warned) == refused_by_default(survey)
    assert bool(warned) == (sum(epsilons) > DEFAULT_MAX_EPSILON)  # 5.0 itself is accepted


def test_the_limit_warning_says_who_refuses_and_how_to_fix_it() -> None:
    (warning,) = survey_warnings(Survey.from_dict(binary_survey(3.0, 3.0)))
    assert warning.startswith("warning: answering it costs ε = 6 in total, above the "
                              "respondents' default limit of ε = 5")
    assert "refuses it" in warning and "/s/s" in warning
    assert "Lower the ε" in warning and "--max-epsilon" in warning


def test_the_page_holds_the_same_default_limit() -> None:
    manifest_js = (ROOT / "client" / "web" / "js" / "manifest.js").read_text(encoding="utf-8")
    (value,) = re.findall(r"export const DEFAULT_MAX_EPSILON = ([0-9.]+);", manifest_js)
    assert float(value) == DEFAULT_MAX_EPSILON


def test_a_location_grid_without_background_is_warned_about() -> None:
    bare = survey_warnings(Survey.from_dict(location_survey()))
    assert len(bare) == 1 and bare[0].startswith("warning: question home: its 3 x 3 grid has "
                                                 "no background image")
    with_map = Survey.from_dict(location_survey(background=f"data:image/png;base64,{PNG}"))
    assert survey_warnings(with_map) == []


def test_plan_prints_the_warnings_on_stderr_after_the_plan(tmp_path) -> None:
    path = tmp_path / "geo.json"
    path.write_text(json.dumps(location_survey(epsilon_geo=4.0)))
    result = CliRunner().invoke(cli, ["plan", str(path), "--n", "500"])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stdout
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2
    assert "above the respondents' default limit" in warnings[0]
    assert "no background image" in warnings[1]


def test_publish_warns_and_publishes_all_the_same(tmp_path, monkeypatch) -> None:
    sent = []
    monkeypatch.setattr(publish_cli, "request_json",
                        lambda url, body, token, timeout: sent.append(body) or (201, {}))
    key, _ = generate_keypair(tmp_path / "keys")
    path = tmp_path / "s.json"
    path.write_text(json.dumps(binary_survey(4.0, 4.0)))
    result = CliRunner().invoke(cli, ["publish", str(path), "--server", "http://x.invalid",
                                      "--token", "t", "--key", str(key)])
    assert result.exit_code == 0, result.output
    assert "published" in result.stdout and len(sent) == 1
    assert result.stderr.startswith("warning: answering it costs ε = 8 in total")
    quiet = tmp_path / "q.json"
    quiet.write_text(json.dumps(binary_survey(1.0)))
    result = CliRunner().invoke(cli, ["publish", str(quiet), "--server", "http://x.invalid",
                                      "--token", "t", "--key", str(key)])
    assert result.exit_code == 0 and result.stderr == ""
