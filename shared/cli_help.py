"""Click help that does not cut descriptions short, and the one check of a `--lang` option.

Click lists a group's subcommands with each one's first sentence cut to fit one line and
ended with "..."; `FullHelpGroup` lists the whole first sentence instead, wrapped like any
other help text. Every group of the `ldpsurvey` command uses it.
"""

from __future__ import annotations

import sys

import click

from .errors import SurveyError


class FullHelpGroup(click.Group):
    """A click group whose command list shows each command's full first sentence."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name in self.list_commands(ctx)
                if (summary := self.summary(ctx, name)) is not None]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def summary(self, ctx: click.Context, name: str) -> str | None:
        """The command's whole first sentence; None for a hidden or unknown one. A group that
        knows its commands' sentences without importing them says them here (analyst/cli.py)."""
        command = self.get_command(ctx, name)
        if command is None or command.hidden:
            return None
        return command.get_short_help_str(limit=sys.maxsize)


def language_tag(ctx: click.Context | None, param: click.Parameter | None,
                 value: str | None) -> str | None:
    """The click callback of every `--lang` option (respond, report, regress, and crosstab
    through report): a tag that is not BCP 47 written with '-' (es_ES) is a usage error
    (exit 2) before anything is fetched (shared/translations.py requested_tag)."""
    if value is None:
        return None
    from .translations import requested_tag  # the question types and numpy: not for --help

    try:
        return requested_tag(value)
    except SurveyError as exc:
        raise click.BadParameter(exc.problem) from None
