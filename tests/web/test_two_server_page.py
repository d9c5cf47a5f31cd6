"""The respondent page refuses a two-server survey with a clear message (until the browser
issue brings Prio3 and HPKE to it): nothing is randomized or sent."""

from __future__ import annotations

import os

from support.two_server import two_server_survey

REFUSED = "body[data-state=refused]"


def test_the_page_refuses_a_two_server_survey(deployment, page):
    data = two_server_survey("https://helper.example", os.urandom(32), os.urandom(32),
                             survey_id="web-two-server")
    deployment.server.publish(data, deployment.key, deployment.token)
    posts = []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
    page.goto(deployment.page_url("web-two-server"))
    page.wait_for_selector(REFUSED)
    text = page.locator("#status").inner_text()
    assert "collected by two servers" in text and "ldpsurvey respond" in text, text
    assert page.locator("form#answers").count() == 0
    assert posts == []
