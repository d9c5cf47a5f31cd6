"""Click help that does not cut descriptions short.

Click lists a group's subcommands with each one's first sentence cut to fit one line and
ended with "..."; `FullHelpGroup` lists the whole first sentence instead, wrapped like any
other help text. Every group of the `ldpsurvey` command uses it.
"""

from __future__ import annotations

import sys

import click


class FullHelpGroup(click.Group):
    """A click group whose command list shows each command's full first sentence."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=sys.maxsize)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
