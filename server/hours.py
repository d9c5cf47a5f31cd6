"""Receive times are kept only to the hour: enough to date a survey wave, too coarse to link."""

from __future__ import annotations

from datetime import UTC, datetime


def current_hour(now: datetime | None = None) -> str:
    """The current UTC time rounded down to the hour, ISO 8601 (e.g. 2026-01-31T14:00:00Z)."""
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:00:00Z")
