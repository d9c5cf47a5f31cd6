"""The options every analyst command that reads a survey's numbers shares: where from (a server
with a token, or a server database read directly), which survey and which version."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def source_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--server, --db, --survey, --survey-version and --token, in that order."""
    for option in reversed((
        click.option("--server", "server_url",
                     help="Server base URL, e.g. http://127.0.0.1:8000."),
        click.option("--db", "db_path",
                     help="Read a server database directly instead of --server: a SQLite "
                          "file (opened read-only) or a postgresql:// URL."),
        click.option("--survey", "survey_id", required=True, help="Survey id."),
        click.option("--survey-version", "version", type=click.IntRange(min=1),
                     help="Survey version (default: the latest)."),
        click.option("--token", envvar="LDPSURVEY_TOKEN",
                     help="Analyst token for --server (or LDPSURVEY_TOKEN)."),
    )):
        command = option(command)
    return command
