"""README.md: the two commands CI relies on, every CLI command documented, generated parts up to
date, every HTTP route listed, and the tutorial's commands working as written."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from ldpsurvey.analyst import cli_docs
from ldpsurvey.analyst.demo import running_server
from ldpsurvey.server.openapi import openapi_document

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DEMO_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -e . && "
                ".venv/bin/ldpsurvey demo")
REGENERATE = "run: python -m ldpsurvey.analyst.cli_docs --write"


def ci_test_command() -> str:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("TEST_COMMAND=")]
    return shlex.split(line.split("=", 1)[1])[0]


def test_readme_opens_with_the_demo_and_the_ci_test_command() -> None:
    lines = README.splitlines()
    assert lines[0].startswith("```")
    assert lines[1] == DEMO_COMMAND
    assert lines[2] == ci_test_command()
    assert lines[3] == "```"


def test_every_cli_command_is_documented() -> None:
    names = cli_docs.command_names()
    assert {"ldpsurvey plan", "ldpsurvey report", "ldpsurvey demo"} <= set(names)
    assert any(len(n.split()) == 3 for n in names), "subcommands of groups are walked"
    reference = (ROOT / cli_docs.CLI_DOC).read_text(encoding="utf-8")
    for name in names:
        assert f"\n## {name}\n" in reference, f"{name} is not in docs/cli.md; {REGENERATE}"
        if name != "ldpsurvey":
            assert f"`{name}`" in README, f"{name} is not in README.md; {REGENERATE}"


def test_generated_docs_match_the_code() -> None:
    assert cli_docs.outdated(ROOT) == [], REGENERATE


def test_the_cli_reference_is_the_real_help_output() -> None:
    # Independent of the generator: click's own --help for one nested command, at the same
    # width, appears verbatim in docs/cli.md.
    from click.testing import CliRunner
    from ldpsurvey.analyst.cli import cli

    res = CliRunner().invoke(cli, ["token", "create", "--help"], terminal_width=cli_docs.WIDTH)
    assert res.exit_code == 0
    reference = (ROOT / cli_docs.CLI_DOC).read_text(encoding="utf-8")
    assert res.output.replace("Usage: cli", "Usage: ldpsurvey").rstrip() in reference


def test_every_http_route_is_in_the_api_table() -> None:
    for path, operations in openapi_document()["paths"].items():
        for method in operations:
            if method in ("get", "post", "put", "patch", "delete"):
                assert f"`{method.upper()} {path}`" in README, (method, path)


def tutorial_lines() -> list[str]:
    section = README.split("## Five-minute tutorial", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "shared" / "samples").mkdir(parents=True)
    sample = ROOT / "shared" / "samples" / "sensitive.toml"
    (tmp_path / "shared" / "samples" / "sensitive.toml").write_bytes(sample.read_bytes())
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    url = None
    outputs: list[str] = []
    with ExitStack() as stack:
        for line in tutorial_lines():
            serve = re.fullmatch(r"\.venv/bin/ldpsurvey serve --db (\S+) --port 8000 &", line)
            if serve:  # started the way the demo starts it, so the test knows when it is up
                url = stack.enter_context(running_server(tmp_path / serve.group(1)))
                continue
            if line == "kill %1":
                continue
            if url is not None:
                line = line.replace("http://127.0.0.1:8000", url)
            done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            outputs.append(done.stdout)
    assert url is not None, "the tutorial starts a server"
    assert (tmp_path / "report.html").is_file()
    assert any("rx_misuse" in out and "1 submission;" in out for out in outputs)


@pytest.mark.parametrize("doc", ["docs/cli.md", "README.md"])
def test_docs_link_to_files_that_exist(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).exists(), target
