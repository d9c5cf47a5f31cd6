"""`ldpsurvey page`: the respondent web page (export a self-hosted copy)."""

from __future__ import annotations

import click
from ldpsurvey.shared.cli_help import FullHelpGroup

from .budget import DEFAULT_MAX_EPSILON


@click.group(cls=FullHelpGroup)
def page() -> None:
    """The respondent web page (the aggregator also serves it at /s/SURVEY_ID)."""


@page.command("export")
@click.argument("survey_id")
@click.option("--server", "server_url", required=True,
              help="Aggregator base URL the page will talk to, e.g. https://agg.example.org")
@click.option("--trust", required=True,
              help="Designer's public key file, or its SHA-256 fingerprint (64 hex digits).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write the page into (empty, or use --force).")
@click.option("--max-epsilon", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_MAX_EPSILON, show_default=True,
              help="The page refuses surveys costing more ε than this.")
@click.option("--force", is_flag=True, help="Write into a non-empty directory.")
def export(survey_id: str, server_url: str, trust: str, out_dir: str, max_epsilon: float,
           force: bool) -> None:
    """Write a copy of the page pinned to one survey, server and signing key.

    Host the directory on a site the aggregator does not control (any static file host
    with HTTPS) and start the aggregator with --allow-origin set to that site's origin. The
    survey is fetched and checked first, as the page will check it.
    """
    from .page_export import export_page

    result = export_page(survey_id, server_url, trust, out_dir, max_epsilon, force)
    click.echo(f"wrote {result.files} files to {result.out_dir}\n"
               f"survey:      {result.survey_id} (version {result.version} checked)\n"
               f"server:      {result.server}\n"
               f"fingerprint: {result.fingerprint}\n"
               f"Host {result.out_dir}/ on your own site (index.html is the page) and run the "
               f"aggregator with --allow-origin https://YOUR-SITE. Opened from disk (file://) "
               f"the page cannot run: browsers do not load its modules from files.")
