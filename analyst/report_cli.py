"""`ldpsurvey report`: an estimate report from a server (HTTP) or a local database."""

from __future__ import annotations

from pathlib import Path

import click

from ..shared.errors import ReportRenderError
from .reports.model import FORMATS, render


@click.command("report", short_help="Estimates as a table, JSON, CSV, Markdown or HTML.")
@click.option("--server", "server_url", help="Server base URL, e.g. http://127.0.0.1:8000.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help="Read a local server database directly (read-only) instead of --server.")
@click.option("--survey", "survey_id", required=True, help="Survey id.")
@click.option("--survey-version", "version", type=click.IntRange(min=1),
              help="Survey version (default: the latest).")
@click.option("--token", envvar="LDPSURVEY_TOKEN",
              help="Analyst token for --server (or LDPSURVEY_TOKEN).")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="table",
              show_default=True, help="Output format.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of standard output.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="HTTP timeout in seconds.")
def report(server_url: str | None, db_path: str | None, survey_id: str, version: int | None,
           token: str | None, fmt: str, out_path: Path | None, confidence: float,
           timeout: float) -> None:
    """Estimates of a survey as a table, JSON, CSV, Markdown or a self-contained HTML page.

    Per question: n, ε and mechanism; per option the unbiased estimate, its standard error,
    interval, worst-case variance bound and the consistent (non-negative) view; groups; for
    integer questions the mean and the estimated distribution.
    """
    from .reports.sources import db_report, fetch_report

    if (server_url is None) == (db_path is None):
        raise click.UsageError("give exactly one of --server URL or --db PATH")
    if server_url is not None:
        if not token:
            raise click.UsageError("--server needs --token (or LDPSURVEY_TOKEN)")
        data = fetch_report(server_url, survey_id, token, confidence, version, timeout)
    else:
        assert db_path is not None
        data = db_report(db_path, survey_id, confidence, version)
    text = render(data, fmt)
    if out_path is None:
        click.echo(text, nl=False)
        return
    try:
        out_path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportRenderError(f"cannot write {out_path}: {exc.strerror or exc}") from None
    click.echo(f"wrote {fmt} report to {out_path}", err=True)
