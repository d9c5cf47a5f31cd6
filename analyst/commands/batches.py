"""`ldpsurvey batches`: a two-server survey's batches on the leader, optionally aggregating first.

The analyst's way to the batch ids that `ldpsurvey report --batch` takes: with `--aggregate`
the leader forms batches of the waiting uploads and runs the aggregation jobs with the helper
(what `serve --aggregate-every` does periodically); the listing shows each batch's state and,
when the invitation codes carry a design, the cell (stratum) and random group it holds
(`report --batch all` combines them: docs/weights.md).
"""

from __future__ import annotations

import json
import urllib.parse

import click

from ..remote import request_json

AGGREGATE_TIMEOUT = 600.0


@click.command("batches")
@click.option("--server", "server_url", required=True,
              help="The leader's base URL, e.g. http://127.0.0.1:8000.")
@click.option("--survey", "survey_id", required=True, help="Survey id.")
@click.option("--token", envvar="LDPSURVEY_TOKEN", required=True,
              help="Analyst token (or LDPSURVEY_TOKEN).")
@click.option("--aggregate", is_flag=True,
              help="First form batches of the waiting uploads and aggregate them with the "
                   "helper (a helper that is down leaves them pending: run it again later).")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
@click.option("--ids", "ids_only", is_flag=True,
              help="Print only the ids of the batches ready to report (aggregated or collected), "
                   "oldest first, one per line.")
def batches(server_url: str, survey_id: str, token: str, aggregate: bool, as_json: bool,
            ids_only: bool) -> None:
    """List a two-server survey's batches on the leader (ids for `report --batch`)."""
    base = f"{server_url.rstrip('/')}/api/surveys/{urllib.parse.quote(survey_id, safe='')}"
    if aggregate:
        done = request_json(f"{base}/two-server/aggregate", body=b"{}", token=token,
                            timeout=AGGREGATE_TIMEOUT)[1]
        click.echo(f"aggregated: {done.get('batches_formed', 0)} batch(es) formed, "
                   f"{done.get('batches_aggregated', 0)} aggregated", err=True)
    listing = request_json(f"{base}/two-server/batches", token=token)[1]
    if as_json:
        click.echo(json.dumps(listing, indent=2))
        return
    if ids_only:
        for b in listing.get("batches", []):
            if b["state"] in ("aggregated", "collected"):
                click.echo(b["batch_id"])
        return
    click.echo(f"{listing.get('waiting_uploads', 0)} upload(s) waiting for a batch")
    for b in listing.get("batches", []):
        part = "".join(f"  {name} {b[name]}" for name in ("cell", "group") if name in b)
        click.echo(f"  {b['batch_id']}  v{b['version']}  {b['state']:10}  {b['reports']:>6} "
                   f"reports  {b['created']}{part}")
    if not listing.get("batches"):
        click.echo("  no batch yet (a batch forms once the survey's min_batch_size uploads "
                   "wait; --aggregate forms and aggregates it)")
