"""An ingest child process that can be made to die mid-group.

The child checks bodies and rebuilds jobs' rules with CRASH_PLAN's functions (they pickle by
name). While a file named CRASH_MARKER sits beside the database, the child removes it and exits
at once: the group it was running never commits, and its parent must answer 503 for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ldpsurvey.server.store import ChildPlan
from ldpsurvey.server.submissions import CHILD_PLAN

CRASH_MARKER = "ingest-child-must-die"


def _die_on_marker(store: Any) -> None:
    marker = Path(store.path).with_name(CRASH_MARKER)
    if marker.exists():
        marker.unlink()
        os._exit(3)


def rules_or_die(store: Any, survey_id: str, version: int, sha256: str) -> Any:
    _die_on_marker(store)
    return CHILD_PLAN.rules_for(store, survey_id, version, sha256)


def prepare_or_die(store: Any, survey_id: str, data: bytes, max_batch: int, fresh: bool) -> Any:
    _die_on_marker(store)
    return CHILD_PLAN.prepare_body(store, survey_id, data, max_batch, fresh)


CRASH_PLAN = ChildPlan(rules_or_die, prepare_or_die, CHILD_PLAN.attempts)
