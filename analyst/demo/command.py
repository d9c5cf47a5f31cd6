"""The `ldpsurvey demo` command: the local demo (this package) or, with --two-server, both
collection modes side by side (two_server.py). Apart from the machinery both use, so that the
two-server demo imports the local one and nothing imports back."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from . import (
    DEFAULT_WORKERS,
    DemoResult,
    run_demo,
    serve_until_interrupted,
    serving_notes,
)


@click.command("demo", short_help="Run it all locally: server, sample survey, respondents, report.")
@click.option("--n", "n", type=click.IntRange(min=1), default=5000, show_default=True,
              help="Number of simulated respondents.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Keep the server's SQLite database here (default: a temporary one).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the HTML report (and, with --serve, the exported page's "
                   "copy). Default: a new directory ldpsurvey-demo-* in the system's temporary "
                   "directory, printed at the end: nothing is written where you run it.")
@click.option("--seed", type=int, help="Seed for the simulated true answers.")
@click.option("--workers", type=click.IntRange(1, 64), default=DEFAULT_WORKERS,
              show_default=True, help="Devices submitting at the same time.")
@click.option("--serve", is_flag=True,
              help="Keep the server running after the report (until Ctrl-C), so you can "
                   "answer the survey yourself in a browser at the printed URL.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="URL",
              help="With --serve: origin (scheme://host[:port]) of an exported copy of the page "
                   "that may call the demo server (as `serve --allow-origin`). Repeatable.")
@click.option("--two-server", "two_server", is_flag=True,
              help="Run a leader and a helper too and show both modes' estimates (local DP "
                   "and two-server central DP) next to the truth at the same n and ε "
                   "(docs/two-server.md).")
def demo(n: int, db_path: Path | None, out_dir: Path | None, seed: int | None, workers: int,
         serve: bool, allow_origins: tuple[str, ...], two_server: bool) -> None:
    """Run a server, publish the sample survey, simulate respondents, print the report.

    Starts a real server on a free loopback port, creates a token and a signing key,
    publishes the bundled sample survey signed, lets N simulated respondents answer through
    the real client (each answer randomized on its device, sent over HTTP), then prints the
    estimates next to the true values and writes an HTML report. Nothing keeps running unless
    --serve is given: then the server stays up with the respondent web page until Ctrl-C,
    and the signing key's location is printed so `page export` can be tried against it.
    """
    if allow_origins and not serve:
        raise click.UsageError("--allow-origin needs --serve (the demo server stops at the end "
                               "otherwise)")

    if two_server:
        from .two_server import run_two_server_demo

        run_two_server_demo(n, seed, workers)
        return

    def show(result: DemoResult) -> None:
        click.echo(f"\n{result.n_sent:,} submissions acknowledged in {result.seconds:.1f} s.\n")
        click.echo(result.table)
        click.echo("The 'true' column is what the simulated respondents really answered; the "
                   "server never saw it.")
        click.echo(f"HTML report: {result.html_path}")
        if not serve:
            click.echo("To answer in a browser yourself, run `ldpsurvey demo --serve`: the "
                       "server then keeps running and the demo prints the page's address.")
            return
        serve_until_interrupted(lambda: click.echo(serving_notes(result)))

    if out_dir is None:  # a private new directory: never the checkout the demo runs in
        out_dir = Path(tempfile.mkdtemp(prefix="ldpsurvey-demo-"))
    run_demo(n, db_path, out_dir, seed, workers, while_serving=show,
             allow_origins=allow_origins)
    if serve:
        click.echo("Server stopped.")
