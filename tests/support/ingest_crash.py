"""Aggregate rules for an ingest child process that can be made to die mid-group.

The child rebuilds each job's rules with this function (it pickles by name). While a file
named CRASH_MARKER sits beside the database, the child removes it and exits at once: the
group it was running never commits, and its parent must answer 503 for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ldpsurvey.server.surveys import compiled_version

CRASH_MARKER = "ingest-child-must-die"


def rules_or_die(store: Any, survey_id: str, version: int, sha256: str) -> Any:
    marker = Path(store.path).with_name(CRASH_MARKER)
    if marker.exists():
        marker.unlink()
        os._exit(3)
    return compiled_version(store, survey_id, version, sha256)
