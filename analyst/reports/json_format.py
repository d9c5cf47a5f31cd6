"""JSON: the server's estimate document, unchanged (stable key order, no NaN)."""

from __future__ import annotations

import json

from .model import Report


def render_json(report: Report) -> str:
    return json.dumps(report.estimates, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
