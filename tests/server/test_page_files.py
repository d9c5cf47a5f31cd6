"""The page's files are served gzip-compressed when the browser accepts it (issue 32: 209 kB
served uncompressed), with the headers a cache needs, compressed once rather than per request.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from ldpsurvey.server import page_files as page_files_module
from ldpsurvey.server.page_files import PageFiles, served_bytes
from ldpsurvey.server.web_page import (
    ASKING_HINT,
    SURVEY_SLOT,
    document_block,
    preload_links,
    type_modules,
    web_dir,
)

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


@pytest.mark.parametrize("path", ["/s/js/mechanisms.js", "/s/css/page.css", "/s/health"])
def test_a_page_file_is_gzipped_for_a_browser_that_accepts_it(client, published, path):
    if path == "/s/health":  # the page, with its survey's document and modules' hints in it
        document = client.get("/api/surveys/health").get_json()
        raw = served_bytes(web_dir() / "index.html").replace(
            SURVEY_SLOT, document_block("health", document)).replace(ASKING_HINT, b"").replace(
            b"</head>", preload_links(type_modules(PageFiles(web_dir()), document))
            + b"\n</head>")
    else:
        raw = served_bytes(web_dir() / path.removeprefix("/s/"))
    response = client.get(path, headers=GZIP)
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response.headers["Vary"]
    assert int(response.headers["Content-Length"]) == len(response.data) < len(raw) * 0.8
    assert gzip.decompress(response.data) == raw
    assert response.headers["Cache-Control"] == "no-cache"
    assert "Content-Security-Policy" in response.headers  # still the page's headers


@pytest.mark.parametrize("accept", [None, "identity", "gzip;q=0, *", "br"])
def test_a_client_that_does_not_accept_gzip_gets_the_raw_bytes(client, accept):
    raw = served_bytes(web_dir() / "js" / "page.js")
    response = client.get("/s/js/page.js", headers={"Accept-Encoding": accept} if accept else {})
    assert response.status_code == 200 and response.data == raw
    assert "Content-Encoding" not in response.headers
    assert "Accept-Encoding" in response.headers["Vary"]  # a cache must not reuse it for gzip


def test_each_form_has_its_own_etag_and_revalidates_with_a_304(client):
    plain = client.get("/s/js/page.js")
    packed = client.get("/s/js/page.js", headers=GZIP)
    assert plain.headers["ETag"] != packed.headers["ETag"]
    again = client.get("/s/js/page.js", headers={**GZIP, "If-None-Match": packed.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    other = client.get("/s/js/page.js", headers={**GZIP, "If-None-Match": plain.headers["ETag"]})
    assert other.status_code == 200 and other.headers["Content-Encoding"] == "gzip"


def test_files_outside_the_page_are_not_served(client):
    for path in ("/s/js/nothing.js", "/s/../app.py", "/s/js/../../../server/app.py", "/s/js"):
        assert client.get(path, headers=GZIP).status_code == 404, path


def test_a_file_is_compressed_once_and_again_only_when_it_changes(tmp_path: Path,
                                                                   monkeypatch) -> None:
    root = tmp_path / "web"
    shutil.copytree(web_dir(), root)
    calls: list[int] = []
    real = gzip.compress

    def counting(data: bytes, *args, **kwargs) -> bytes:
        calls.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(page_files_module.gzip, "compress", counting)
    files = PageFiles(root)
    first = files.get("js/page.js")
    for _ in range(5):
        assert files.get("js/page.js") is first
    assert len(calls) == 1
    target = root / "js" / "page.js"
    target.write_bytes(target.read_bytes() + b"\nexport const changed = 1;\n")
    changed = files.get("js/page.js")
    assert len(calls) == 2 and gzip.decompress(changed.gzipped or b"") == served_bytes(target)
    assert changed.digest != first.digest


def test_the_survey_page_carries_the_survey_document_the_api_answers(client, published):
    """Issue 40: the page's code asked for the survey one round trip after it had loaded (150 ms
    and more on a slow network, before anything else could start); the page carries it."""
    page = client.get("/s/health").data
    assert SURVEY_SLOT in served_bytes(web_dir() / "index.html")
    assert SURVEY_SLOT not in page
    start = page.index(b'<script type="application/json" id="survey-document"')
    block = page[start:page.index(b"</script>", start)]
    assert b'data-survey="health"' in block
    carried = json.loads(block[block.index(b">") + 1:])
    assert carried == client.get("/api/surveys/health").get_json()
    assert page.index(b"survey-document") < page.index(b'src="js/where.js"')
    assert client.get("/s/nothing").status_code == 404


def test_nothing_in_a_document_can_end_its_data_block():
    block = document_block("x", {"title": "</script><script>alert(1)</script><!-- & \u2028"})
    assert block.count(b"<") == 2 and block.count(b">") == 2  # its own two tags
    assert b"&" not in block and "\u2028".encode() not in block
    inner = block[block.index(b">") + 1:block.rindex(b"<")]
    assert json.loads(inner) == {"title": "</script><script>alert(1)</script><!-- & \u2028"}


def test_the_survey_page_preloads_its_question_types_modules(client, published):
    """Issue 40: a survey's type units (js/types/) were asked for once where.js had read the
    survey, a round trip after the page's own code; the page names them for preloading,
    with what they import that every page does not (index.html preloads that)."""
    page = client.get("/s/health").data.decode()
    links = re.compile(r'<link rel="modulepreload" href="([^"]+)">')
    own = [name for name in links.findall(served_bytes(web_dir() / "index.html").decode())
           if name != "js/api.js"]  # its hint dropped (ASKING_HINT)
    hinted = links.findall(page)[len(own):]  # the hints come last
    signed = client.get("/api/surveys/health").get_json()["signed_bytes"]
    types = {q["type"] for q in json.loads(base64.b64decode(signed))["questions"]}
    assert len(types) >= 2
    every_page = set(PageFiles(web_dir()).modules(["js/app.js", "js/where.js"]))
    assert {f"js/types/{name}.js" for name in types} | {"js/types/base.js"} <= set(hinted)
    assert len(hinted) == len(set(hinted)) and not set(hinted) & every_page
    assert all((web_dir() / name).is_file() for name in hinted)
    for name in every_page - {"js/app.js"}:  # index.html hints these (and loads app.js)
        assert f'<link rel="modulepreload" href="{name}">' in page, name


def test_the_survey_page_does_not_preload_what_only_asking_and_sending_need(client, published):
    """Issue 40: index.html hints api.js for an exported page, whose where.js asks its server
    for the survey with it; the page served here carries its survey, so the hint would only
    make api.js one more file before the first question (it loads to send, after them)."""
    index = served_bytes(web_dir() / "index.html").decode()
    assert index.count('<link rel="modulepreload" href="js/api.js">') == 1
    page = client.get("/s/health").data.decode()
    assert "js/api.js" not in re.findall(r'<link rel="modulepreload" href="([^"]+)">', page)


def test_a_document_it_cannot_read_gets_no_hints():
    files = PageFiles(web_dir())
    for document in ({}, {"signed_bytes": "%%"}, {"signed_bytes": "e30="},
                     {"signed_bytes": "eyJxdWVzdGlvbnMiOlt7InR5cGUiOiIuLi9hcGkifV19"}):
        assert type_modules(files, document) == [], document
