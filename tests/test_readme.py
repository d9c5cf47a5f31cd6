"""README.md: the two commands CI relies on, every CLI command documented, generated parts up to
date, every HTTP route listed, and the tutorial's commands working as written."""

from __future__ import annotations

import os
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
from support.timeouts import TEST_TIMEOUT

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


SCRATCH = 'd="$(mktemp -d)" && ln -s "$PWD/.venv" "$PWD/shared" "$d" && cd "$d"'


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    # A stand-in for the repository root: this interpreter's environment and the samples.
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".venv").symlink_to(Path(sys.prefix))
    (root / "shared").symlink_to(ROOT / "shared")
    lines = tutorial_lines()
    assert lines[0] == SCRATCH, "the tutorial starts in a scratch directory"
    # Step 0 as written, then `pwd` says where it went (each line runs in its own shell).
    done = subprocess.run(["bash", "-c", f"{SCRATCH} && pwd"], cwd=root, capture_output=True,
                          text=True, timeout=TEST_TIMEOUT, env={**os.environ,
                                                               "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    scratch = Path(done.stdout.strip())
    assert scratch.parent == tmp_path and (scratch / "shared" / "samples").is_dir()
    url = None
    outputs: list[str] = []
    with ExitStack() as stack:
        for line in lines[1:]:
            serve = re.fullmatch(r"\.venv/bin/ldpsurvey serve --db (\S+) --port 8000 &", line)
            if serve:  # started the way the demo starts it, so the test knows when it is up
                url = stack.enter_context(running_server(scratch / serve.group(1)))
                continue
            if line == "kill %1":
                continue
            if url is not None:
                line = line.replace("http://127.0.0.1:8000", url)
            done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True,
                                  text=True, timeout=TEST_TIMEOUT)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            outputs.append(done.stdout)
    assert url is not None, "the tutorial starts a server"
    assert (scratch / "report.html").is_file()
    assert not (root / "keys").exists() and not (root / "token.txt").exists()
    assert any("rx_misuse" in out and "1 submission;" in out for out in outputs)


def test_the_development_table_has_a_row_per_top_level_package() -> None:
    """Every role pyproject.toml installs (package-dir) has its row: the helper was missing."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    folders = set(project["tool"]["setuptools"]["package-dir"].values())
    section = README.split("## Development", 1)[1].split("\n\n", 3)[2]
    rows = set(re.findall(r"^\| `([a-z_]+)/` \|", section, re.M))
    assert rows == folders, f"README's Development table: {sorted(rows)} vs {sorted(folders)}"


@pytest.mark.parametrize("doc", ["docs/cli.md", "README.md"])
def test_docs_link_to_files_that_exist(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).exists(), target


@pytest.mark.parametrize("path", ["keys/survey-signing.key", "keys/survey-signing.pub",
                                  "token.txt", "answers.json", "device-1/ledger.json",
                                  "report.html", "survey.db", "demo-signing.key"])
def test_what_the_tutorial_makes_is_ignored_by_git(path: str) -> None:
    # Should the tutorial be run in the work tree after all, `git add -A` must not pick up a
    # private key, a token or true answers.
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT,
                          timeout=TEST_TIMEOUT, check=False)
    assert done.returncode == 0, f"{path} is not ignored by .gitignore"


def test_the_test_command_says_how_long_it_takes_and_names_a_quick_subset_that_is() -> None:
    """A newcomer on a busy 2-core machine saw 2% of the suite pass in 200 s and stopped it:
    the bullet under the command says its size and length, and a quick subset that exists
    and is small (its stated size checked against what pytest collects)."""
    (bullet,) = [ln for ln in README.splitlines() if ln.startswith("- Second line:")]
    assert "5,600 tests" in bullet and "10 minutes on an idle 2-core machine" in bullet
    quick = re.search(r"For a quick check.*?`(\.venv/bin/python -m pytest [^`]+)` runs .*?"
                      r"about ([\d,]+) tests", bullet)
    assert quick, bullet
    args = shlex.split(quick.group(1))[3:]
    paths = [a for a in args if not a.startswith("-")]
    assert paths and all((ROOT / p).exists() for p in paths), paths
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                                "-p", "no:randomly", *paths], cwd=ROOT, capture_output=True,
                               text=True, timeout=TEST_TIMEOUT)
    count = int(re.search(r"(\d+) tests? collected", collected.stdout).group(1))
    stated = int(quick.group(2).replace(",", ""))
    assert abs(count - stated) <= 0.2 * stated, (count, stated)
    assert count < 2000  # quick: a quarter of the suite at most


def test_the_threat_model_says_what_disclosed_answers_and_design_rows_tell_the_server() -> None:
    """The five lines omitted two things the server learns, documented elsewhere: disclosed
    answers (docs/disclosed.md) and an invitation code's design row (docs/weights.md)."""
    model = README[README.index("**Threat model, in five lines.**"):]
    first = model.split("\n1. ", 1)[1].split("\n2. ", 1)[0]
    assert "disclosed" in first and "(docs/disclosed.md)" in first
    assert "invitation code" in first and "stratum, PSU, weight" in first
    assert "(docs/weights.md)" in first
    assert "cannot learn a true answer to a randomized question" in model
    weights = (ROOT / "docs" / "weights.md").read_text(encoding="utf-8")
    assert "**its stratum and PSU**" in weights and "**its weight and fpc**" in weights
    disclosed = (ROOT / "docs" / "disclosed.md").read_text(encoding="utf-8")
    assert "identification" in disclosed
