"""Analyst reports: an estimate document (plus its survey) rendered as a terminal table, JSON,
CSV, Markdown or one self-contained HTML page with charts."""

from __future__ import annotations

from .model import FORMATS, Report, Truth, render

__all__ = ["FORMATS", "Report", "Truth", "render"]
