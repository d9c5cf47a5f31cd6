"""JSON: the server's estimate document, unchanged (stable key order, no NaN); with
`report --lang`, a `labels` object beside it (analyst/reports/language.py)."""

from __future__ import annotations

import json
from typing import Any

from .model import Report


def render_json(report: Report) -> str:
    document: Any = report.estimates
    if report.language is not None:  # report --lang: the text, beside the unchanged numbers
        from .language import labels_document

        document = {**report.estimates, "labels": labels_document(report)}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
