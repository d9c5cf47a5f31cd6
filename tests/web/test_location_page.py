"""A location question on the page: a phone-sized grid answered from the keyboard, the review
in words, the composition totals, and a valid report stored by the real server."""

from __future__ import annotations

from typing import Any

from test_page import READY, SENT

# A 2 x 2 PNG (the map), shipped inside the signed survey.
PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGNk"
       "YPjPwMDAxMDAwMDAAAAmDAIB/uvVqQAAAABJRU5ErkJggg==")


def location_survey(deployment: Any) -> dict[str, Any]:
    data = {"id": f"where-{next(deployment.ids)}", "title": "Where", "version": 1,
            "questions": [{"id": "home", "type": "location", "text": "Where is your home?",
                           "epsilon_geo": 0.5, "grid": {"rows": 6, "cols": 6, "cell_km": 1.0},
                           "regions": {"north": ["1-3,1-6"]}, "background": PNG}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    return data


def test_a_cell_picked_by_keyboard_on_a_phone_is_randomized_and_stored(deployment, page):
    page.set_viewport_size({"width": 360, "height": 740})
    sid = location_survey(deployment)["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    grid = page.locator(".grid-picker")
    box = grid.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
    assert "url(\"data:image/png" in page.evaluate(
        "getComputedStyle(document.querySelector('.grid-picker')).backgroundImage")
    page.locator("[role=gridcell][tabindex='0']").focus()
    for key in ("ArrowRight", "ArrowRight", "ArrowDown", "Enter"):
        page.keyboard.press(key)
    assert page.locator(".cell-choice").inner_text() == "Picked: Row 2, column 3 (north)."
    assert page.locator("[aria-selected=true]").get_attribute("data-cell") == "2,3"
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "Row 2, column 3" in review
    assert "will send a cell near yours" in review and "km of it with probability" in review
    assert page.locator("details.composition summary").inner_text() == \
        "Everything this browser has answered, in total"
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(sid)
    assert isinstance(stored["answers"]["home"], int) and 0 <= stored["answers"]["home"] < 36
    assert page.problems == []


def test_no_cell_picked_is_an_error_on_the_grid(deployment, page):
    sid = location_survey(deployment)["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    page.get_by_role("button", name="Review what will be sent").click()
    assert "required" in page.locator(".error:not([hidden])").inner_text()
    assert page.evaluate("document.activeElement.dataset.cell") == "1,1"
    assert page.locator("#review").count() == 0
