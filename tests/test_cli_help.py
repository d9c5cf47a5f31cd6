"""The CLI's help is complete: every option says what it does, and no command list cuts a
description short (issue 17)."""

from __future__ import annotations

import click
import pytest
from ldpsurvey.analyst import cli_docs

COMMANDS = cli_docs.walk()


@pytest.mark.parametrize("path, ctx", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_has_help_text(path: tuple[str, ...], ctx: click.Context) -> None:
    for param in ctx.command.params:
        if isinstance(param, click.Option) and not {"--help", "--version"} & set(param.opts):
            assert param.help, f"{' '.join(path)} {param.opts[0]} has no help text"


@pytest.mark.parametrize("width", [80, cli_docs.WIDTH])
@pytest.mark.parametrize("path, ctx", [(p, c) for p, c in COMMANDS
                                       if isinstance(c.command, click.Group)],
                         ids=[" ".join(p) for p, c in COMMANDS if isinstance(c.command,
                                                                             click.Group)])
def test_command_lists_show_whole_descriptions(path: tuple[str, ...], ctx: click.Context,
                                               width: int) -> None:
    group = ctx.command
    assert isinstance(group, click.Group)
    # The real help option names: click caches a command's help option, so a context with
    # the default names would change later help output (docs/cli.md, tests/test_readme.py).
    narrow = click.Context(group, info_name=path[-1], terminal_width=width,
                           max_content_width=width, help_option_names=ctx.help_option_names)
    listing = " ".join(group.get_help(narrow).split("Commands:", 1)[1].split())
    for name in group.list_commands(narrow):
        sub = group.get_command(narrow, name)
        assert sub is not None
        first = " ".join(sub.get_short_help_str(limit=10**6).split())
        assert first in listing, f"{' '.join(path)}: {name}'s description is cut"
    assert "..." not in listing
