"""The respondent's device: verify a survey, randomize answers locally, remember, deliver.

`Respondent` is the Python API; `ldpsurvey respond|receipts|outbox` the commands.

The names below are imported when first asked for (PEP 562), not with the package: every
`ldpsurvey` command imports some module of this package (a default, a constant), and the
respondent's stack (the mechanisms, cryptography, the HTTP client) cost each of them ~0.2 s
at start (tests/test_cli_start.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .respondent import Respondent, Submission, flush_outbox
    from .transport import RetryPolicy
    from .trust import VerifiedSurvey

# name -> the module of this package that defines it
_EXPORTS = {"Respondent": "respondent", "Submission": "respondent", "flush_outbox": "respondent",
            "RetryPolicy": "transport", "VerifiedSurvey": "trust"}

__all__ = ["Respondent", "RetryPolicy", "Submission", "VerifiedSurvey", "flush_outbox"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
