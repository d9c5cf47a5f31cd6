"""Deciding whether this device will answer a survey manifest at all.

The server is untrusted: it could raise a question's ε, swap the mechanism, drop the signature,
or serve an old version. The device therefore verifies the Ed25519 signature over the canonical
survey bytes (shared.manifest.verify_manifest, which also re-derives every mechanism's
parameters from the question), checks the signing key against one the respondent trusts
(`--trust`) or pinned on first use per (server origin, survey id), refuses a second manifest
under an id + version already seen and any version older than one seen, and checks the ε
against the respondent's policy. Any refusal raises before anything is answered or sent.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ldpsurvey.shared.errors import ManifestError, SigningKeyError
from ldpsurvey.shared.manifest import SignedManifest, fingerprint, load_public_key, verify_manifest
from ldpsurvey.shared.survey import Survey

from .budget import DEFAULT_MAX_EPSILON, Budget, as_budget
from .errors import KeyChangedError, PolicyError, ReplayError, TrustError
from .state import StateDir

TRUST_FILE = "trust.json"
_FINGERPRINT = re.compile(r"^(?:sha256:)?([0-9a-fA-F]{64})$")


@dataclass(frozen=True)
class VerifiedSurvey:
    """A survey whose manifest verified and passed this device's checks."""

    survey: Survey
    manifest: SignedManifest
    origin: str
    fingerprint: str
    first_use: bool
    # From the served document, not signed (the operator's `invites create`): the survey
    # takes a submission only with an unused invitation code (client/invitation.py).
    invite_only: bool = False


def origin_of(server_url: str) -> str:
    """scheme://host:port of a server URL: what a pin is tied to."""
    parts = urlsplit(server_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TrustError(f"{server_url!r} is not an http(s) server URL")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def trusted_fingerprint(trust: str) -> str:
    """The fingerprint `--trust` names: a hex SHA-256 fingerprint, or a public key file."""
    match = _FINGERPRINT.match(trust.strip())
    if match:
        return match.group(1).lower()
    if not Path(trust).exists():
        raise TrustError(f"--trust {trust!r} is neither a public key file nor a 64-hex-digit "
                         f"SHA-256 fingerprint")
    try:
        return fingerprint(load_public_key(trust))
    except SigningKeyError as exc:
        raise TrustError(f"--trust: {exc.message}") from exc


def check_no_disclosed(survey: Survey) -> None:
    """Refuse a survey that asks any question directly (`respond --refuse-disclosed`)."""
    disclosed = [q.id for q in survey.questions if q.disclosed]
    if disclosed:
        raise PolicyError(f"refusing survey {survey.id!r}: question(s) "
                          f"{', '.join(map(repr, disclosed))} are disclosed (sent as you answer "
                          f"them, not randomized) and --refuse-disclosed is set",
                          {"disclosed": disclosed})


def check_policy(survey: Survey, limit: float | Budget,
                 spent: Sequence[float] = ()) -> None:
    """Refuse a survey whose questions or total ε exceed the respondent's limit (a bare number:
    `--max-epsilon` on the plain sum; a `Budget`: its rule and ceilings, client/budget.py).
    `spent`: the ε this device already charged, for a lifetime ceiling."""
    as_budget(limit).check(survey, spent)


class TrustStore:
    """Pinned keys and the manifests seen, per (origin, survey id), in the state directory."""

    def __init__(self, state: StateDir, warn: Callable[[str], None] | None = None) -> None:
        self.state = state
        self.warn = warn or (lambda message: print(message, file=sys.stderr))

    def check(self, body: Any, *, server_url: str, survey_id: str, trust: str | None = None,
              max_epsilon: float | Budget = DEFAULT_MAX_EPSILON) -> VerifiedSurvey:
        """Verify a fetched manifest; raise TrustError/PolicyError or record it as seen."""
        origin = origin_of(server_url)
        where = f"survey {survey_id!r} from {origin}"
        try:
            manifest = verify_manifest(body)
        except ManifestError as exc:
            raise TrustError(f"refusing {where}: {exc.message}", exc.details) from exc
        survey = manifest.survey
        if survey.id != survey_id:
            raise TrustError(f"refusing {where}: the server sent survey {survey.id!r} instead")
        claimed = body.get("sha256") if isinstance(body, Mapping) else None
        if claimed is not None and claimed != manifest.sha256:
            raise TrustError(f"refusing {where}: the manifest's sha256 {claimed!r} does not "
                             f"match its survey ({manifest.sha256})")
        key_fp = manifest.fingerprint
        key = f"{origin} {survey_id}"
        with self.state.lock():
            data = self.state.read_object(TRUST_FILE, {"pins": {}, "seen": {}},
                                          keys={"pins": dict, "seen": dict})
            pin = data["pins"].get(key)
            if trust is not None:
                wanted = trusted_fingerprint(trust)
                if key_fp != wanted:
                    raise KeyChangedError(
                        f"refusing {where}: it is signed by key {key_fp[:16]}…, not the key you "
                        f"trust ({wanted[:16]}…)")
            elif pin is not None and pin["fingerprint"] != key_fp:
                raise KeyChangedError(
                    f"refusing {where}: its signing key changed from the pinned "
                    f"{pin['fingerprint'][:16]}… to {key_fp[:16]}…; if the designer really "
                    f"rotated keys, verify the new fingerprint and pass it with --trust")
            seen = data["seen"].get(key, {})
            previous = seen.get(str(survey.version))
            if previous is not None and previous != manifest.sha256:
                raise ReplayError(
                    f"refusing {where}: version {survey.version} was seen before with different "
                    f"content (sha256 {previous[:16]}…, now {manifest.sha256[:16]}…); a changed "
                    f"survey must get a new version")
            highest = max((int(v) for v in seen), default=0)
            if survey.version < highest:
                raise ReplayError(f"refusing {where}: version {survey.version} is older than "
                                  f"version {highest} already seen (a replayed manifest?)")
            check_policy(survey, max_epsilon)
            first_use = pin is None and trust is None
            if pin is None or pin["fingerprint"] != key_fp:  # new, or replaced via --trust
                data["pins"][key] = {"fingerprint": key_fp, "public_key": manifest.public_key,
                                     "pinned_at": _now(),
                                     "how": "--trust" if trust is not None else "first use"}
            seen[str(survey.version)] = manifest.sha256
            data["seen"][key] = seen
            self.state.write_json(TRUST_FILE, data)
        if first_use:
            self.warn(
                "WARNING: trusting this survey's signing key ON FIRST USE.\n"
                f"  survey {survey_id!r} at {origin}\n"
                f"  key fingerprint (SHA-256): {key_fp}\n"
                "  Nothing proves this key belongs to the survey's designer: compare the\n"
                "  fingerprint with one published by the designer, or pass it with --trust.\n"
                "  It is now pinned; a different key for this survey will be refused.")
        return VerifiedSurvey(survey=survey, manifest=manifest, origin=origin,
                              fingerprint=key_fp, first_use=first_use)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
