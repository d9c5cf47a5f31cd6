"""The `ldpsurvey` command: one root group whose subcommands live beside the code they drive.

Subcommands are imported only when run, so `ldpsurvey respond` never loads the server stack.
Library errors become a one-line message and exit status 1 here, and nowhere else.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

# One BLAS thread per command, unless the environment says otherwise: the design-based
# estimators' matrix-vector products are too small for OpenBLAS's threads, which spin on a
# second core. `report --rake` at 10^6 (bench/bench_design_report.py, quiet 2-core machine):
# 10.5 s CPU and 8.9 s wall with the default threads, 7.7 s and 7.7 s with one. Set before
# numpy is first imported (below, through ldpsurvey.shared), where OpenBLAS reads it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click
from ldpsurvey.shared.cli_help import FullHelpGroup
from ldpsurvey.shared.errors import MESSAGE_LIMIT, LdpSurveyError, clip

# name -> "module:attribute" of a click command or group.
COMMANDS: dict[str, str] = {
    "simulate": "ldpsurvey.analyst.simulate.cli:simulate",
    "respond": "ldpsurvey.client.cli:respond",
    "receipts": "ldpsurvey.client.cli:receipts",
    "outbox": "ldpsurvey.client.cli:outbox",
    "page": "ldpsurvey.client.page_cli:page",
    "plan": "ldpsurvey.analyst.plan.cli:plan",
    "import": "ldpsurvey.analyst.commands.import_form:import_group",
    "serve": "ldpsurvey.server.cli:serve",
    "token": "ldpsurvey.server.cli:token",
    "keys": "ldpsurvey.analyst.commands.publish:keys",
    "publish": "ldpsurvey.analyst.commands.publish:publish",
    "recompute": "ldpsurvey.server.cli:recompute",
    "migrate-store": "ldpsurvey.server.cli:migrate_store",
    "invites": "ldpsurvey.server.invites_cli:invites",
    "report": "ldpsurvey.analyst.commands.report:report",
    "export": "ldpsurvey.analyst.commands.export:export",
    "batches": "ldpsurvey.analyst.commands.batches:batches",
    "regress": "ldpsurvey.analyst.commands.regress:regress",
    "demo": "ldpsurvey.analyst.demo.command:demo",
    "helper": "ldpsurvey.helper.cli:helper",
    "leader": "ldpsurvey.helper.cli:leader",
}


class LazyGroup(FullHelpGroup):
    """A group that imports each subcommand when it is used, and maps library errors once."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module_name, attr = COMMANDS[cmd_name].split(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LdpSurveyError as exc:
            raise click.ClickException(one_line(exc.message)) from exc
        except click.ClickException as exc:  # click's own (usage) errors echo arguments too
            exc.message = clip(exc.message, MESSAGE_LIMIT)
            raise


def one_line(message: str) -> str:
    """The message on one line, and bounded: it may echo hostile input."""
    return clip(" ".join(str(message).split()), MESSAGE_LIMIT)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ldpsurvey")
def cli() -> None:
    """ldpsurvey: surveys with local differential privacy.

    Each answer is randomized on the respondent's device; the server only ever sees
    randomized reports and turns them into estimates with error bars.
    """


def main() -> None:
    cli(prog_name="ldpsurvey")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
