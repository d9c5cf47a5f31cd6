"""Typed errors of the Prio3 library; the server and client map them to messages at the edge."""

from __future__ import annotations

from ldpsurvey.shared.errors import LdpSurveyError


class Prio3Error(LdpSurveyError):
    """Base class of every error the Prio3 library raises on purpose."""

    code = "prio3_error"


class DecodeError(Prio3Error):
    """A message has the wrong length or holds a value outside the field (non-canonical)."""

    code = "prio3_decode_error"


class MeasurementError(Prio3Error):
    """A measurement does not fit the instance (refused on the device before sharding)."""

    code = "prio3_invalid_measurement"


class VerifyError(Prio3Error):
    """Verification failed: the proof is rejected or the joint randomness does not match."""

    code = "prio3_verify_failed"


class ParameterError(Prio3Error):
    """An instance parameter, key, nonce, randomness or aggregator id has the wrong shape."""

    code = "prio3_invalid_parameter"
