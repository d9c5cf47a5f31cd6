"""The `ldpsurvey` command: one root group whose subcommands live beside the code they drive.

Subcommands are imported only when run, so `ldpsurvey respond` never loads the server stack,
and `ldpsurvey --help` imports none of them.
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

# name -> ("module:attribute" of a click command or group, its short help). `ldpsurvey --help`
# lists the short help from here, so it imports none of the commands: importing them all (each
# with its stack: numpy, the mechanisms, cryptography, the server's store) took ~1 s before any
# command ran. Each is the first sentence of the command's own docstring, as click shortens it;
# tests/test_cli_start.py fails when one differs.
COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": (
        "ldpsurvey.analyst.simulate.cli:simulate",
        "Simulate N respondents answering SURVEY_FILE and compare estimates with the truth."),
    "respond": (
        "ldpsurvey.client.cli:respond",
        "Answer a survey: verify it, randomize each answer on this device, send the reports."),
    "receipts": (
        "ldpsurvey.client.cli:receipts",
        "What this device has sent (randomized reports only) and the ε spent per survey."),
    "outbox": (
        "ldpsurvey.client.cli:outbox",
        "Submissions stored on this device that are not delivered yet."),
    "page": (
        "ldpsurvey.client.page_cli:page",
        "The respondent web page (the aggregator also serves it at /s/SURVEY_ID)."),
    "plan": (
        "ldpsurvey.analyst.plan.cli:plan",
        "Respondents needed for a margin of error, per mechanism."),
    "import": (
        "ldpsurvey.analyst.commands.import_form:import_group",
        "Bring a questionnaire written in another tool into ldpsurvey."),
    "serve": (
        "ldpsurvey.server.cli:serve",
        "Run the aggregator HTTP API (waitress; no access log, no request metadata kept)."),
    "token": (
        "ldpsurvey.server.cli:token",
        "Analyst bearer tokens (only their SHA-256 is stored)."),
    "keys": (
        "ldpsurvey.analyst.commands.publish:keys",
        "Ed25519 survey-signing keys."),
    "publish": (
        "ldpsurvey.analyst.commands.publish:publish",
        "Sign a survey file and upload it to a server."),
    "recompute": (
        "ldpsurvey.server.cli:recompute",
        "Rebuild aggregates from the stored reports and report any mismatch."),
    "migrate-store": (
        "ldpsurvey.server.cli:migrate_store",
        "Copy every survey, report, token and invitation code into an empty database, then "
        "verify counts and aggregates."),
    "invites": (
        "ldpsurvey.server.invites_cli:invites",
        "One-time invitation codes (only their SHA-256 is stored)."),
    "report": (
        "ldpsurvey.analyst.commands.report:report",
        "Estimates as a table, JSON, CSV, Markdown or HTML."),
    "export": (
        "ldpsurvey.analyst.commands.export:export",
        "Submissions with pseudo-values, for R and Stata."),
    "batches": (
        "ldpsurvey.analyst.commands.batches:batches",
        "List a two-server survey's batches on the leader (ids for `report --batch`)."),
    "regress": (
        "ldpsurvey.analyst.commands.regress:regress",
        "Logistic/linear regression through the randomization."),
    "demo": (
        "ldpsurvey.analyst.demo.command:demo",
        "Run it all locally: server, sample survey, respondents, report."),
    "helper": (
        "ldpsurvey.helper.cli:helper",
        "The helper: the second aggregator of a survey collected by two servers, run "
        "independently."),
    "leader": (
        "ldpsurvey.helper.cli:leader",
        "The leader's two-server keys (the leader itself is `ldpsurvey serve --hpke-key`)."),
}


class LazyGroup(FullHelpGroup):
    """A group that imports each subcommand when it is used, and maps library errors once."""

    def summary(self, ctx: click.Context, name: str) -> str | None:
        if name in COMMANDS:
            return COMMANDS[name][1]
        return super().summary(ctx, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module_name, attr = COMMANDS[cmd_name][0].split(":")
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
