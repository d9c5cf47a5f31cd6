"""What a handler takes from the request: the app's store and validated query parameters
(a bad value is a 400 that names the parameter)."""

from __future__ import annotations

import math

from flask import current_app, request
from ldpsurvey.shared.errors import EstimateError
from ldpsurvey.shared.estimates import z_value

from .common.errors import InvalidParameter
from .common.wire_ints import VERSION_RANGE, param_int
from .store import Store

STORE_EXTENSION = "ldpsurvey.store"


def current_store() -> Store:
    """The app's store (opened once per app; safe to share between request threads)."""
    return current_app.extensions[STORE_EXTENSION]


def version_param() -> int | None:
    """`?version=N` (N >= 1), or None for the latest version."""
    raw = request.args.get("version")
    return None if raw is None else param_int(raw, "version", *VERSION_RANGE)


def confidence_param(default: float = 0.95) -> float:
    """`?confidence=c` with 0 < c < 1."""
    raw = request.args.get("confidence")
    if raw is None:
        return default
    try:
        value = float(raw) if len(raw) <= 40 else math.nan
    except ValueError:
        value = math.nan
    try:  # z_value also refuses c so close to 1 that its quantile is infinite
        if not (0 < value < 1):  # also refuses NaN
            raise ValueError(value)
        z_value(value)
    except (ValueError, EstimateError):
        raise InvalidParameter("confidence must be a number strictly between 0 and 1",
                               {"parameter": "confidence"}) from None
    return value


def required_param(name: str) -> str:
    """A query parameter that must be present and non-empty."""
    raw = request.args.get(name)
    if not raw:
        raise InvalidParameter(f"{name} is required", {"parameter": name})
    return raw


def bins_param(name: str) -> tuple[int, ...] | None:
    """`?bins=0,5,10`: strictly increasing integer bin edges, or None when absent."""
    from ldpsurvey.shared.errors import CrosstabError
    from ldpsurvey.shared.joint_features import parse_bins

    raw = request.args.get(name)
    if not raw:
        return None
    if len(raw) > 2000:
        raise InvalidParameter(f"{name}: too many bins", {"parameter": name})
    try:
        edges = [param_int(edge.strip(), name) for edge in raw.split(",")]
    except InvalidParameter:
        raise InvalidParameter(f"{name} must be comma-separated 64-bit signed integers, got "
                               f"{raw!r}", {"parameter": name}) from None
    try:
        return parse_bins(edges)
    except CrosstabError as exc:
        raise InvalidParameter(f"{name}: {exc.message}", {"parameter": name}) from None
