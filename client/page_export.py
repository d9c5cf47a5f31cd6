"""`ldpsurvey page export`: a self-contained copy of the respondent page, pinned to one survey.

The copy holds the aggregator's URL, the survey id and the fingerprint of the designer's
signing key in js/config.js, and its Content-Security-Policy allows connections to that
aggregator only. Hosted on an origin the aggregator does not control (the designer's own site),
it protects respondents from a hostile aggregator: the aggregator can no longer change the code
that randomizes, and the page refuses any survey not signed by the pinned key. Before writing,
the survey is fetched and checked exactly as the page will check it (signature, key, ε), so a
wrong key or server is caught now rather than by respondents.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path

from ldpsurvey.shared.errors import ManifestError
from ldpsurvey.shared.manifest import verify_manifest

from .errors import KeyChangedError, TrustError
from .transport import RetryPolicy, Transport
from .trust import DEFAULT_MAX_EPSILON, check_policy, origin_of, trusted_fingerprint

CONFIG_FILE = "js/config.js"
PAGE_CSP = "connect-src 'self'"


@dataclass(frozen=True)
class ExportedPage:
    out_dir: Path
    server: str
    survey_id: str
    version: int
    fingerprint: str
    files: int


def config_js(server: str, survey_id: str, fingerprint: str, max_epsilon: float) -> str:
    """The generated js/config.js: plain JSON data, no code from the inputs."""
    data = {"server": server, "survey": survey_id, "fingerprint": fingerprint,
            "maxEpsilon": max_epsilon}
    return ("// Written by `ldpsurvey page export`: this copy of the page answers only this\n"
            "// survey, on this server, signed by this key (SHA-256 fingerprint of the raw\n"
            "// Ed25519 public key).\n"
            f"export const config = {json.dumps(data, indent=2)};\n")


def pinned_index(index_html: str, server_origin: str) -> str:
    """index.html with its CSP allowing connections to the aggregator's origin only."""
    if index_html.count(PAGE_CSP) != 1:
        raise TrustError("the packaged index.html has no connect-src 'self' policy to pin")
    return index_html.replace(PAGE_CSP, f"connect-src {server_origin}")


def check_survey(server: str, survey_id: str, fingerprint: str, max_epsilon: float,
                 retry: RetryPolicy | None = None) -> int:
    """Fetch the survey and refuse what the page would refuse; returns its version."""
    transport = Transport(server, retry or RetryPolicy(attempts=2))
    response = transport.request("GET", transport.survey_path(survey_id),
                                 what=f"fetching survey {survey_id!r}")
    body = response.body
    where = f"survey {survey_id!r} at {server}"
    try:
        manifest = verify_manifest(body)
    except ManifestError as exc:
        raise TrustError(f"refusing to export {where}: {exc.message}") from exc
    if manifest.survey.id != survey_id:
        raise TrustError(f"refusing to export {where}: the server sent survey "
                         f"{manifest.survey.id!r} instead")
    if manifest.fingerprint != fingerprint:
        raise KeyChangedError(f"refusing to export {where}: it is signed by key "
                              f"{manifest.fingerprint[:16]}…, not the key you trust "
                              f"({fingerprint[:16]}…)")
    if not isinstance(body, dict) or not isinstance(body.get("signed_bytes"), str):
        raise TrustError(f"refusing to export {where}: the server does not serve the signed "
                         "bytes (signed_bytes) a browser needs; upgrade the server")
    check_policy(manifest.survey, max_epsilon)
    return manifest.survey.version


def export_page(survey_id: str, server: str, trust: str, out_dir: str | Path,
                max_epsilon: float = DEFAULT_MAX_EPSILON, force: bool = False,
                retry: RetryPolicy | None = None) -> ExportedPage:
    """Check the survey, then write the page with server, survey and key pinned into out_dir."""
    origin = origin_of(server)
    server = server.rstrip("/")
    fingerprint = trusted_fingerprint(trust)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TrustError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise TrustError(f"{out} is not empty; choose an empty directory or pass --force")
    version = check_survey(server, survey_id, fingerprint, max_epsilon, retry)
    count = 0
    with as_file(files("ldpsurvey.client") / "web") as web:
        for source in sorted(Path(web).rglob("*")):
            if not source.is_file() or source.suffix not in (".html", ".js", ".css"):
                continue
            relative = source.relative_to(web)
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if relative.as_posix() == CONFIG_FILE:
                target.write_text(config_js(server, survey_id, fingerprint, max_epsilon),
                                  encoding="utf-8")
            elif relative.as_posix() == "index.html":
                target.write_text(pinned_index(source.read_text(encoding="utf-8"), origin),
                                  encoding="utf-8")
            else:
                shutil.copyfile(source, target)
            count += 1
    return ExportedPage(out_dir=out, server=server, survey_id=survey_id, version=version,
                        fingerprint=fingerprint, files=count)
