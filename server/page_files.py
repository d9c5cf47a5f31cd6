"""The respondent page's static files as the aggregator serves them, gzip-compressed once.

Each file is read and compressed (gzip level 9) the first time it is asked for, and the bytes are
kept in memory; a later request only stats the file (size and mtime) to notice an upgrade on
disk, so nothing is recompressed per request. A response is the raw bytes, or the gzipped ones
when the request accepts gzip (Accept-Encoding, q-values honoured), with:

- `Vary: Accept-Encoding` on every compressible file, so a shared cache keeps both forms apart;
- `Content-Encoding: gzip` on the compressed form only;
- a strong ETag per form (the raw bytes' SHA-256, "-gzip" added for the compressed one) and
  `Cache-Control: no-cache`: the page's file names carry no version, so a browser revalidates
  each time and gets a 304 when nothing changed (never a stale module next to a new one).

A JavaScript file is served without its comments and indentation (js_comments.py: a
tokenizer that keeps every token and line break, or the file as written where it is unsure):
the modules' comments are for the repository's readers, and were about a fifth of the bytes a
page loads compressed. `served_bytes` is that form, for anything else that serves the page.

The page is small (about 150 kB raw), so keeping it in memory costs little.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import mimetypes
import os
import posixpath
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flask import Request, Response
from werkzeug.exceptions import NotFound
from werkzeug.security import safe_join

from .js_comments import Unsure, static_imports, strip

COMPRESSIBLE = frozenset({".html", ".js", ".css", ".svg", ".json", ".txt"})
GZIP_LEVEL = 9


@dataclass(frozen=True)
class PageFile:
    """One file as read: its bytes as served (served_bytes), gzipped (None when not
    compressible or not smaller), and what identifies this version of it."""

    stamp: tuple[int, int]  # (size, mtime in ns) when read
    raw: bytes
    gzipped: bytes | None
    digest: str  # of the raw bytes: the ETag
    mimetype: str
    imports: tuple[str, ...] = ()  # a module's static imports, as written ("./x.js")


def _mimetype(path: str) -> str:
    if path.endswith(".js"):
        return "text/javascript"  # whatever the platform's mime table says
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def served_bytes(path: str | Path) -> bytes:
    """The bytes of the page file at `path` as served: a JavaScript file without its comments
    and indentation (js_comments.strip), as written where that is unsure; any other as is."""
    raw = Path(path).read_bytes()
    if Path(path).suffix != ".js":
        return raw
    try:
        return strip(raw.decode("utf-8")).encode("utf-8")
    except (Unsure, UnicodeDecodeError):
        return raw


def page_file(raw: bytes, name: str, stamp: tuple[int, int] = (0, 0)) -> PageFile:
    """`raw`, the bytes of a file named `name`, with its compressed form when that is smaller."""
    gzipped = None
    if Path(name).suffix in COMPRESSIBLE:
        packed = gzip.compress(raw, GZIP_LEVEL, mtime=0)  # mtime 0: the same bytes every time
        gzipped = packed if len(packed) < len(raw) else None
    return PageFile(stamp=stamp, raw=raw, gzipped=gzipped,
                    digest=hashlib.sha256(raw).hexdigest()[:32], mimetype=_mimetype(name))


def _read(path: str, stamp: tuple[int, int]) -> PageFile:
    read = page_file(served_bytes(path), path, stamp)
    if path.endswith(".js"):
        try:
            imports = tuple(static_imports(read.raw.decode("utf-8")))
        except (Unsure, UnicodeDecodeError):
            imports = ()
        read = dataclasses.replace(read, imports=imports)
    return read


class PageFiles:
    """The files under `root`, each read and compressed once per version on disk."""

    def __init__(self, root: str | Path) -> None:
        self.root = str(root)
        self._files: dict[str, PageFile] = {}

    def get(self, filename: str) -> PageFile:
        """The file at `filename` (relative to the root); NotFound for anything else (outside
        the root, a directory, missing)."""
        path = safe_join(self.root, filename)
        if path is None:
            raise NotFound()
        try:
            info = os.stat(path)
        except OSError:
            raise NotFound() from None
        if not stat.S_ISREG(info.st_mode):
            raise NotFound()
        stamp = (info.st_size, info.st_mtime_ns)
        cached = self._files.get(filename)
        if cached is None or cached.stamp != stamp:
            cached = _read(path, stamp)
            self._files[filename] = cached  # a race reads the file twice, harmlessly
        return cached

    def modules(self, entries: Iterable[str]) -> list[str]:
        """The modules `entries` (paths under the root) and every module they import
        statically, transitively, each once, in the order found; a path that is not a file
        under the root is left out."""
        found: list[str] = []
        todo = list(entries)
        while todo:
            name = todo.pop(0)
            if name in found:
                continue
            try:
                module = self.get(name)
            except NotFound:
                continue
            found.append(name)
            todo.extend(posixpath.normpath(posixpath.join(posixpath.dirname(name), spec))
                        for spec in module.imports if spec.startswith("."))
        return found

    def response(self, filename: str, request: Request) -> Response:
        """The file for this request: compressed when it accepts gzip, conditional (304)."""
        return respond(self.get(filename), request)


def respond(page_file: PageFile, request: Request) -> Response:
    """`page_file` for this request: compressed when it accepts gzip, conditional (304)."""
    compressed = (page_file.gzipped is not None
                  and request.accept_encodings.quality("gzip") > 0)
    response = Response(page_file.gzipped if compressed else page_file.raw,
                        mimetype=page_file.mimetype)
    if page_file.gzipped is not None:
        response.vary.add("Accept-Encoding")
    if compressed:
        response.content_encoding = "gzip"
    response.set_etag(page_file.digest + ("-gzip" if compressed else ""))
    response.cache_control.no_cache = True
    return response.make_conditional(request)
