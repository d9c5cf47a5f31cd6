"""What the server adds for the web page: signed_bytes, the page at /s/<id> with its CSP,
and CORS for the origins an operator allows (never reflecting any other)."""

from __future__ import annotations

import base64
import posixpath
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.app import create_app
from ldpsurvey.server.cors import BadOrigin, normalize_origin
from ldpsurvey.shared.manifest import verify_manifest
from ldpsurvey.shared.survey import canonical_json
from support.server_data import submission

ALLOWED = "https://surveys.example.org"


@pytest.fixture()
def cors_client(db_path, published):
    app = create_app({"DATABASE": str(db_path), "TESTING": True,
                      "ALLOWED_ORIGINS": [ALLOWED + "/", "http://localhost:8080"]})
    return app.test_client()


def test_the_document_carries_the_exact_signed_bytes(client, published):
    doc = client.get("/api/surveys/health").get_json()
    signed = base64.b64decode(doc["signed_bytes"], validate=True)
    assert signed == canonical_json(doc["survey"])
    manifest_ = verify_manifest(doc)
    assert manifest_.survey.canonical_bytes() == signed


def test_a_served_document_can_be_published_as_is_but_not_with_other_bytes(client, auth,
                                                                            published):
    doc = client.get("/api/surveys/health").get_json()
    assert client.post("/api/surveys", json=doc, headers=auth).status_code == 200
    doc["signed_bytes"] = base64.b64encode(b"{}").decode()
    response = client.post("/api/surveys", json=doc, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["error"]["details"] == {"field": "signed_bytes"}


def test_the_page_is_served_with_a_strict_csp(client, published):
    response = client.get("/s/health")
    assert response.status_code == 200 and response.mimetype == "text/html"
    csp = response.headers["Content-Security-Policy"]
    for directive in ("default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
                      "base-uri 'none'"):
        assert directive in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert b'src="js/app.js"' in response.data
    script = client.get("/s/js/app.js")
    assert script.status_code == 200 and "javascript" in script.mimetype
    assert script.headers["Content-Security-Policy"] == csp
    assert client.get("/s/css/page.css").mimetype == "text/css"


def test_the_page_of_an_unknown_survey_is_a_json_404(client):
    response = client.get("/s/nope")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "not_found"
    assert client.get("/s/js/nothing.js").status_code == 404


def test_an_allowed_origin_gets_cors_headers_and_preflights(cors_client):
    got = cors_client.get("/api/surveys/health", headers={"Origin": ALLOWED})
    assert got.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "Origin" in got.headers["Vary"]
    preflight = cors_client.options("/api/surveys/health/submissions", headers={
        "Origin": "http://localhost:8080", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "http://localhost:8080"
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert preflight.headers["Access-Control-Allow-Headers"].lower() == "content-type"
    posted = cors_client.post("/api/surveys/health/submissions", json=submission(),
                              headers={"Origin": ALLOWED})
    assert posted.status_code == 200
    assert posted.headers["Access-Control-Allow-Origin"] == ALLOWED
    refused = cors_client.post("/api/surveys/health/submissions", json={"answers": {}},
                               headers={"Origin": ALLOWED})
    assert refused.status_code == 422  # the page can read why it was refused
    assert refused.headers["Access-Control-Allow-Origin"] == ALLOWED


@pytest.mark.parametrize("origin", ["https://evil.example", "null", ALLOWED + ".evil.example",
                                    "http://surveys.example.org", ALLOWED.upper()])
def test_other_origins_are_never_reflected(cors_client, origin):
    for response in (
            cors_client.get("/api/surveys/health", headers={"Origin": origin}),
            cors_client.options("/api/surveys/health/submissions", headers={
                "Origin": origin, "Access-Control-Request-Method": "POST"})):
        assert "Access-Control-Allow-Origin" not in response.headers
        assert "Access-Control-Allow-Methods" not in response.headers


def test_no_origin_is_allowed_by_default(client, published):
    response = client.get("/api/surveys/health", headers={"Origin": ALLOWED})
    assert "Access-Control-Allow-Origin" not in response.headers


def test_analyst_endpoints_never_get_cors(cors_client, auth):
    listing = cors_client.get("/api/surveys", headers={"Origin": ALLOWED, **auth})
    assert listing.status_code == 200
    assert "Access-Control-Allow-Origin" not in listing.headers


@pytest.mark.parametrize(("given", "expected"), [
    ("https://Example.org", "https://example.org"),
    ("https://example.org:443/", "https://example.org"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("http://[::1]:80", "http://[::1]"),
])
def test_origins_are_normalized_as_browsers_send_them(given, expected):
    assert normalize_origin(given) == expected


@pytest.mark.parametrize("bad", ["*", "https://*.example.org", "example.org", "ftp://x.org",
                                 "https://example.org/page", "https://u:p@example.org",
                                 "https://example.org?x=1", "null", "https://example.org:99999"])
def test_bad_origins_are_refused(bad):
    with pytest.raises(BadOrigin):
        normalize_origin(bad)


def test_serve_refuses_a_bad_allow_origin_in_one_line(tmp_path):
    """Checked before the port is bound: the verdict must not depend on whether some other
    process holds the port (the default 8000 often is, on a shared machine)."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "x.db"), "--port",
                                          str(busy.getsockname()[1]), "--allow-origin", "*"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: '*' is not an origin")
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()



STATIC_IMPORT = re.compile(r'^\s*(?:import|export)\b[^;"\']*?\bfrom\s+"([^"]+)"'
                           r'|^\s*import\s+"([^"]+)"', re.M)
DYNAMIC_IMPORT = re.compile(r'\bimport\("\./([^"]+)\.js"\)')
OPTIONAL = {"location", "grid_picker", "hpke", "twoserver/flow", "twoserver/upload",
            "twoserver/verify", "prio3/vdaf", "multiselect", "conditions", "sha256"}


def static_imports(js: Path, start: str) -> set[str]:
    """The modules `start` (a path under js/ without .js) imports statically, transitively."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for found in STATIC_IMPORT.findall((js / f"{module}.js").read_text(encoding="utf-8")):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(module),
                                                       found[0] or found[1]))
            todo.append(target.removesuffix(".js"))
    return seen


def test_index_preloads_exactly_the_modules_a_single_server_survey_loads():
    """Every module app.js imports statically is preloaded; the location and two-server modules
    are neither imported statically nor preloaded: optional.js imports them only for surveys
    that use them (issue 32)."""
    from ldpsurvey.server.web_page import web_dir

    index = (web_dir() / "index.html").read_text()
    preloaded = set(re.findall(r'rel="modulepreload" href="js/([a-z0-9_/]+)\.js"', index))
    js = web_dir() / "js"
    shipped = {p.relative_to(js).with_suffix("").as_posix() for p in js.rglob("*.js")}
    static = static_imports(js, "app") - {"app"}
    optional = set().union(*(static_imports(js, module) for module in DYNAMIC_IMPORT.findall(
        (js / "optional.js").read_text(encoding="utf-8")))) - static
    # and api.js, which where.js imports to ask an exported page's server for the survey (the
    # page the aggregator serves, which carries it, drops that hint: server/web_page.py)
    assert preloaded == static | {"api"}
    assert optional >= OPTIONAL
    assert shipped >= static | optional
