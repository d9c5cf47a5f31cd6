"""Where a command's rendered text goes: standard output, or a file named by `--out`."""

from __future__ import annotations

from pathlib import Path

import click
from ldpsurvey.shared.errors import ReportRenderError


def emit(text: str, out_path: Path | None, what: str) -> None:
    """Print `text`, or write it to `out_path` and say so on stderr ("wrote {what} to ...");
    a file that cannot be written is a ReportRenderError (one line at the CLI's edge)."""
    if out_path is None:
        click.echo(text, nl=False)
        return
    try:
        out_path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportRenderError(f"cannot write {out_path}: {exc.strerror or exc}") from None
    click.echo(f"wrote {what} to {out_path}", err=True)
