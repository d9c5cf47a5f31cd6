"""An exported page that cannot work says why and what the operator must do (issue 17):
opened from disk (file://, where browsers do not run ES modules) it used to stay on "Checking
the survey…" forever; on an origin the server does not allow (CORS) it used to say "offline?".
A real outage must still read as one, and a page whose code fails to load must say so."""

from __future__ import annotations

from typing import Any

from static_server import serve_web_root


def test_an_exported_page_opened_from_disk_says_to_host_it(deployment, page):
    sid = deployment.new_survey()["id"]
    deployment.export(sid)
    index = deployment.site_root / sid / "index.html"
    page.goto(index.as_uri())
    page.wait_for_selector("body[data-state=file]")
    status = page.locator("#status").inner_text()
    assert "opened from a file on this computer" in status
    assert "--allow-origin" in status and "web server" in status
    assert "Checking the survey" not in status
    assert page.locator("#title").inner_text() == "This page must be opened from a web server"


def test_an_exported_page_on_an_origin_not_allowed_names_the_origin_to_allow(deployment, page):
    sid = deployment.new_survey()["id"]
    deployment.export(sid)
    posts: list[Any] = []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
    with serve_web_root(deployment.site_root) as other:  # same files, an origin not allowed
        origin = other.rstrip("/")
        page.goto(f"{other}{sid}/index.html")
        page.wait_for_selector("body[data-state=cors]")
        status = page.locator("#status").inner_text()
        assert f"the survey server at {deployment.server.url} is running" in status
        assert f"does not allow pages served from {origin}" in status
        assert f"--allow-origin {origin}" in status
        assert "offline" not in status
    assert posts == []


def test_an_unreachable_server_still_reads_as_offline_not_as_cors(deployment, page):
    sid = deployment.new_survey()["id"]
    url = deployment.export(sid)  # an allowed origin: only the network is missing
    page.route(f"{deployment.server.url}/api/**", lambda route: route.abort("connectionrefused"))
    page.goto(url)
    page.wait_for_selector("body[data-state=offline]")
    status = page.locator("#status").inner_text()
    assert "cannot be reached" in status and "allow" not in status


def test_a_page_whose_code_fails_to_load_says_so(deployment, page):
    sid = deployment.new_survey()["id"]
    page.route("**/js/rational.js", lambda route: route.fulfill(status=404, body="missing"))
    page.goto(deployment.page_url(sid))
    page.wait_for_selector("body[data-state=error]")
    assert "code did not load" in page.locator("#status").inner_text()
