"""The settings sheet and the survey's own keys: id (from form_id, or --id), version (or
--survey-version), title and its translations, the base language, and the two-server mode
(`collection = two-server` with the [two_server] table's keys)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ldpsurvey.shared.survey import MAX_VERSION, SLUG
from ldpsurvey.shared.translations import DEFAULT_LANGUAGE

from .cells import whole
from .errors import XlsFormError, quoted
from .languages import Languages

# Settings ldpsurvey reads: XLSForm's own, then ldpsurvey's (the [two_server] table's keys).
TWO_SERVER_SETTINGS = ("helper_url", "helper_hpke_key", "leader_hpke_key", "leader_url",
                       "min_batch_size", "delta")
_TWO_SERVER_NEEDED = ("helper_url", "helper_hpke_key", "leader_hpke_key", "min_batch_size")
READ_SETTINGS = ("form_title", "form_id", "version", "default_language", "collection",
                 *TWO_SERVER_SETTINGS)


@dataclass(frozen=True)
class SurveySettings:
    """The survey's top-level keys and their translations ({tag: {"title": ...}})."""

    data: dict[str, Any]
    texts: dict[str, dict[str, str]]


def unread_settings(settings: Mapping[str, Any]) -> list[str]:
    """A note naming the settings ldpsurvey does not use, if any."""
    unread = [k for k in settings if k.split("::", 1)[0] not in READ_SETTINGS]
    return [f"settings ldpsurvey does not use: {', '.join(unread)}"] if unread else []


def is_two_server(settings: Mapping[str, Any]) -> bool:
    return _collection(settings) == "two-server"


def _collection(settings: Mapping[str, Any]) -> str:
    return str(settings.get("collection", "ldp")).strip()


def survey_settings(form: Mapping[str, Any], settings: Mapping[str, Any], languages: Languages,
                    survey_id: str | None, version: int | None, filename: str,
                    notes: list[str]) -> SurveySettings:
    """The survey's keys from pyxform's form and the settings row (`survey_id` and `version`
    from the command line win); XlsFormError for settings that do not map."""
    survey_id = survey_id or _survey_id(str(form.get("id_string") or ""), notes, filename)
    if not SLUG.fullmatch(survey_id):
        raise XlsFormError(f"--id {survey_id!r}: must be a slug: 1-64 lowercase letters, "
                           "digits, '-' or '_'")
    if version is None:
        version = _version(settings.get("version"), notes)
    title, title_tr = _title(form.get("title"), settings, languages, survey_id, notes)
    data: dict[str, Any] = {"id": survey_id, "title": title, "version": version}
    if languages.tags and (languages.base_tag != DEFAULT_LANGUAGE or len(languages.tags) > 1):
        data["language"] = languages.base_tag
    collection = _collection(settings)
    if collection not in ("ldp", "two-server"):
        raise XlsFormError(f"{filename}: settings collection {quoted(collection)} is "
                           "neither 'ldp' nor 'two-server'")
    if collection == "two-server":
        data["collection"] = collection
        data["two_server"] = _two_server(settings, filename)
    return SurveySettings(data, {tag: {"title": text} for tag, text in title_tr.items()})


def _survey_id(form_id: str, notes: list[str], filename: str) -> str:
    """The form id as a slug (said when it changes)."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", form_id.strip().lower()).strip("-_")[:64].strip("-_")
    if not slug or not SLUG.fullmatch(slug):
        raise XlsFormError(f"{filename}: the form id {quoted(form_id)} has no slug form: pass "
                           "--id, e.g. --id drug-use-2025")
    if slug != form_id:
        notes.append(f"the form id {form_id!r} becomes the survey id {slug!r} (ldpsurvey ids "
                     "are lowercase slugs; --id to choose another)")
    return slug


def _version(value: Any, notes: list[str]) -> int:
    """settings version: an integer from 1 to MAX_VERSION; 1 when there is none or it is not
    such an integer (KoboToolbox's generated 'vJ3k...' versions, a date and time), said in the
    notes: a form's version is its designer's bookkeeping, not a reason to refuse the form, and
    publishing a changed survey under a version already published is refused by the server."""
    if value is None or str(value).strip() == "":
        notes.append("settings has no version: the survey is version 1 (--survey-version to "
                     "choose)")
        return 1
    text = str(value).strip()
    if not whole(text) or not 1 <= int(text) <= MAX_VERSION:
        notes.append(f"settings version {quoted(text)} is not an integer from 1 to "
                     f"{MAX_VERSION} (ldpsurvey versions are): the survey is version 1 "
                     "(--survey-version N to choose)")
        return 1
    return int(text)


def _title(value: Any, settings: Mapping[str, Any], languages: Languages, survey_id: str,
           notes: list[str]) -> tuple[str, dict[str, str]]:
    """(title, {tag: title}): form_title and its translations; the survey id without one."""
    if isinstance(value, Mapping):
        title, title_tr = languages.text({languages.base: value.get("default"), **value})
    else:
        title, title_tr = str(value or ""), {}
    if not settings.get("form_title") or not title:
        title = title or survey_id
        if not settings.get("form_title"):
            notes.append(f"settings has no form_title: the title is {title!r}")
    return title, title_tr


def _two_server(settings: Mapping[str, Any], filename: str) -> dict[str, Any]:
    """The [two_server] table from the settings of the same names."""
    missing = [k for k in _TWO_SERVER_NEEDED if not settings.get(k)]
    if missing:
        raise XlsFormError(f"{filename}: collection = two-server needs the settings "
                           f"{', '.join(missing)} (the [two_server] table: `ldpsurvey helper "
                           "keys generate` and `ldpsurvey leader keys generate` write the keys)")
    out: dict[str, Any] = {}
    for key in TWO_SERVER_SETTINGS:
        value = settings.get(key)
        if value is not None and str(value).strip() != "":
            out[key] = _two_server_value(key, str(value).strip(), filename)
    return out


def _two_server_value(key: str, text: str, filename: str) -> Any:
    if key == "min_batch_size":
        if not whole(text):
            raise XlsFormError(f"{filename}: settings min_batch_size {quoted(text)} is not a "
                               "whole number")
        return int(text)
    if key == "delta":
        try:
            return float(text)
        except ValueError:
            raise XlsFormError(f"{filename}: settings delta {quoted(text)} is not a "
                               "number") from None
    return text
