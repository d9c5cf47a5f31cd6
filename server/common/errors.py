"""Typed errors of the server side, each carrying the HTTP status it maps to at the edge.

They subclass `LdpSurveyError`, so the CLI prints them as one line like every library error,
and `http_errors` turns them (and the library's own errors) into JSON error bodies.
"""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError


class ServerError(LdpSurveyError):
    """Base of server-side errors; `status` is the HTTP status the API answers with."""

    code = "server_error"
    status = 400

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message, details)


class MalformedRequest(ServerError):
    """The body is not strict JSON (syntax, NaN/Infinity, duplicate keys, too deep)."""

    code = "malformed_json"
    status = 400


class InvalidParameter(ServerError):
    """A query parameter is missing or out of range."""

    code = "invalid_parameter"
    status = 400


class AuthenticationRequired(ServerError):
    """No bearer token, or one that is not even shaped like a token."""

    code = "authentication_required"
    status = 401


class Forbidden(ServerError):
    """A well-formed bearer token that is unknown or revoked."""

    code = "forbidden"
    status = 403


class NotFound(ServerError):
    code = "not_found"
    status = 404


class Conflict(ServerError):
    """The request contradicts stored state (same survey version with other content)."""

    code = "conflict"
    status = 409


class SurveyClosed(Conflict):
    code = "survey_closed"


class SurveyChanged(Conflict):
    """A survey version was stored after the request was checked against the survey's
    versions: the request is checked again (it reaches a client only if that keeps happening)."""

    code = "survey_changed"


class UnsupportedMediaType(ServerError):
    code = "unsupported_media_type"
    status = 415


class ValidationFailed(ServerError):
    """Well-formed JSON whose content is wrong; `details` says where."""

    code = "validation_failed"
    status = 422


class SubmissionRejected(ValidationFailed):
    """At least one submission in the request is invalid; nothing was stored."""

    code = "invalid_submission"


STORE_UNAVAILABLE = "the store is unavailable, try again later"


class StoreUnavailable(ServerError):
    """The database server cannot be reached or refused the connection: try again later."""

    code = "store_unavailable"
    status = 503


class StoreError(LdpSurveyError):
    """The database is missing, of a newer schema, or inconsistent (CLI side)."""

    code = "store_error"
