"""Typed errors of the respondent's device; the CLI turns each into a one-line message."""

from __future__ import annotations

from ldpsurvey.shared.errors import LdpSurveyError


class TrustError(LdpSurveyError):
    """The survey manifest is not one this device trusts: nothing is answered or sent."""

    code = "untrusted_survey"


class KeyChangedError(TrustError):
    """The survey is signed with a key other than the one trusted or pinned for it."""

    code = "key_changed"


class ReplayError(TrustError):
    """An older version, or a different manifest under an id and version already seen."""

    code = "manifest_replay"


class PolicyError(LdpSurveyError):
    """The survey asks for more ε than the respondent's policy allows."""

    code = "privacy_policy"


class AlreadyAnsweredError(LdpSurveyError):
    """This device already answered this survey version: answering twice would spend ε twice."""

    code = "already_answered"


class InvitationError(LdpSurveyError):
    """An invite-only survey answered without an invitation code, or a code that cannot be
    one: refused before anything is randomized, charged or sent."""

    code = "invitation_required"


class DeliveryError(LdpSurveyError):
    """The server could not be reached, or refused a request (details carry the HTTP status)."""

    code = "delivery_failed"


class StateError(LdpSurveyError):
    """The state directory is unusable or one of its files does not parse."""

    code = "invalid_state"
