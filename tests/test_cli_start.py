"""`ldpsurvey --help` and every command's `--help` start without the stacks they do not use.

Each took 1.2-1.3 s of CPU before it printed anything: the root imported every command to list
them, and with them matplotlib (~0.45 s, for the report's charts), the respondent's client (the
HTTP client, cryptography) and the mechanisms. What is asserted is which modules are loaded, in
a fresh interpreter, not a time: matplotlib only where a chart is drawn, the respondent only
where a survey is answered or the outbox sent, and the root's help imports no command at all
(analyst/cli.py lists their first sentences from its COMMANDS table).
"""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from ldpsurvey.analyst.cli import COMMANDS, cli

# Runs the command as `ldpsurvey ARGS...` would, then prints the names of the loaded modules.
LOADED = """
import contextlib, io, sys
from ldpsurvey.analyst.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli(sys.argv[1:], prog_name="ldpsurvey")
    except SystemExit as exc:
        assert exc.code == 0, exc.code
print(" ".join(sys.modules))
"""
# Never at a command's start: loaded inside the functions that draw, and the commands that send.
NOT_AT_START = ("matplotlib", "ldpsurvey.client.respondent")
# Not for the root's help either: it imports no command, so none of their stacks.
NOT_FOR_THE_LIST = (*NOT_AT_START, "numpy", "cryptography", "ldpsurvey.shared.mechanisms",
                    *sorted({target.split(":")[0] for target, _ in COMMANDS.values()}))


def loaded_by(*args: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True, text=True,
                         check=True, timeout=120)
    return set(out.stdout.split())


def test_the_command_list_imports_no_command() -> None:
    loaded = loaded_by("--help")
    assert not [m for m in NOT_FOR_THE_LIST if m in loaded]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_commands_help_loads_no_chart_and_no_respondent(name: str) -> None:
    loaded = loaded_by(name, "--help")
    assert not [m for m in NOT_AT_START if m in loaded]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_sentence_is_the_commands_own(name: str) -> None:
    """The root lists COMMANDS' sentence; `ldpsurvey NAME --help` shows the docstring's."""
    ctx = click.Context(cli, info_name="ldpsurvey")
    command = cli.get_command(ctx, name)
    assert command is not None and not command.hidden
    assert COMMANDS[name][1] == command.get_short_help_str(limit=sys.maxsize), (
        f"analyst/cli.py COMMANDS[{name!r}]: write the first sentence of its docstring")
