"""A location question's background image: a data: URL, refused with what is wrong with it.

The image travels inside the signed survey (the page never loads one from another origin), so
the only accepted form is `data:image/png|jpeg|webp;base64,<standard base64>` of at most
MAX_BACKGROUND_BYTES decoded bytes. A designer who pastes a link, a GIF, URL-encoded text or a
truncated base64 string is told which of these it is, not just the expected form again.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .errors import SurveyError

MAX_BACKGROUND_BYTES = 512 * 1024
# The longest data: URL that can hold MAX_BACKGROUND_BYTES: base64 is 4/3 larger, plus a prefix.
MAX_BACKGROUND_CHARS = MAX_BACKGROUND_BYTES * 4 // 3 + 64
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")
_FORM = "data:image/png;base64,... (or image/jpeg, image/webp)"
_HEADER = re.compile(r"^data:([^,;]*)((?:;[^,;]*)*),")
_BASE64_CHAR = re.compile(r"[A-Za-z0-9+/=]")


def sniff_image_type(raw: bytes) -> str | None:
    """The image type the bytes' signature shows (PNG, JPEG, WebP, or GIF to name it), or None."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    if raw[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def check_background(value: Any, where: str) -> str:
    """`value` if it is an accepted background data: URL; else SurveyError saying what is wrong."""
    if not isinstance(value, str):
        raise SurveyError(where, f"must be a string (a data: URL, {_FORM}), got "
                          f"{type(value).__name__}")
    if len(value) > MAX_BACKGROUND_CHARS:
        raise SurveyError(where, f"is {len(value) // 1024} KiB of text, more than a "
                          f"{MAX_BACKGROUND_BYTES // 1024} KiB image can take: shrink or "
                          f"recompress the image")
    head = value[:64].strip().lower()
    if head.startswith(("http:", "https:", "//", "file:", "/", "./", "../")):
        raise SurveyError(where, f"is a link ({value[:40]!r}); the page never loads images from "
                          f"elsewhere: embed the image itself as {_FORM}")
    if not value.startswith("data:"):
        raise SurveyError(where, f"does not start with 'data:' (it starts {value[:20]!r}): "
                          f"expected {_FORM}")
    header = _HEADER.match(value)
    if header is None:
        raise SurveyError(where, f"has no ',' after its media type: expected {_FORM}")
    mime, attributes = header.group(1).strip().lower(), header.group(2).lower()
    if mime not in IMAGE_TYPES:
        raise SurveyError(where, f"has media type {mime or 'none'!r}, which is not supported: "
                          f"use a PNG, JPEG or WebP image")
    if ";base64" not in attributes:
        raise SurveyError(where, f"is not base64-encoded (no ';base64' before the comma): "
                          f"expected data:{mime};base64,...")
    if header.group(0) != f"data:{mime};base64,":  # the page accepts exactly this prefix
        raise SurveyError(where, f"begins {header.group(0)!r}: write the prefix exactly "
                          f"data:{mime};base64, (lowercase, no other parameters)")
    payload = value[header.end():]
    raw = _decode(payload, where)
    if len(raw) > MAX_BACKGROUND_BYTES:
        raise SurveyError(where, f"the image is {len(raw) / 1024:.0f} KiB, more than the "
                          f"{MAX_BACKGROUND_BYTES // 1024} KiB allowed: shrink or recompress it")
    actual = sniff_image_type(raw)
    if actual != mime:
        shown = f"a {actual.removeprefix('image/').upper()} image" if actual else (
            "no PNG, JPEG or WebP image (its first bytes are not an image signature)")
        fix = (f"declare it as data:{actual};base64,..." if actual in IMAGE_TYPES
               else "convert it to PNG, JPEG or WebP")
        raise SurveyError(where, f"says {mime} but its bytes are {shown}: {fix}")
    return value


def _decode(payload: str, where: str) -> bytes:
    """The bytes of standard base64 text, or an error naming the first problem found."""
    if not payload:
        raise SurveyError(where, "has no image data after the comma")
    for i, char in enumerate(payload):
        if not _BASE64_CHAR.match(char):
            kind = ("whitespace" if char.isspace() else
                    "URL-safe base64" if char in "-_" else
                    "URL-encoding" if char == "%" else repr(char))
            raise SurveyError(where, f"the base64 data has {kind} at character {i + 1} of "
                              f"{len(payload)}: use standard base64 (A-Z a-z 0-9 + /) on one "
                              f"line")
    stripped = payload.rstrip("=")
    if "=" in stripped:
        raise SurveyError(where, "the base64 data has '=' padding in the middle: two data "
                          "strings joined together, or a copy-paste error")
    if len(payload) % 4:
        raise SurveyError(where, f"the base64 data is {len(payload)} characters, not a multiple "
                          f"of 4: it was cut short or its '=' padding is missing")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SurveyError(where, f"the base64 data does not decode: {exc}") from None
