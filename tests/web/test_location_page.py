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


def big_survey(deployment: Any) -> dict[str, Any]:
    """Issue 32's case: a 20 x 20 grid without a background, with regions."""
    data = {"id": f"big-{next(deployment.ids)}", "title": "Where", "version": 1,
            "questions": [{"id": "home", "type": "location", "text": "Where is your home?",
                           "epsilon_geo": 0.5, "grid": {"rows": 20, "cols": 20,
                                                        "cell_km": 0.25},
                           "regions": {"old town": ["3-7,3-8"],
                                       "harbour": ["14-18,12-19"]}}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    return data


def visible_in_frame(page: Any, cell: str) -> bool:
    return page.evaluate("""(cell) => {
        const b = document.querySelector(`[data-cell="${cell}"]`).getBoundingClientRect();
        const f = document.querySelector(".grid-scroll").getBoundingClientRect();
        return b.left >= f.left - 1 && b.right <= f.right + 1 && b.top >= f.top - 1 &&
               b.bottom <= f.bottom + 1 && b.right <= innerWidth + 1;
    }""", cell)


def test_a_big_grid_on_a_phone_has_tappable_cells_and_its_regions_drawn(deployment, page):
    """Was: a blank grey square of 15 px cells, regions never drawn. Now every cell is at least
    44 x 44 px, the grid scrolls in its own frame (the page never sideways) and says so, each
    region is outlined and named where it lies, a region button brings it into view, and taps
    and the keyboard still reach every cell."""
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import Survey

    page.set_viewport_size({"width": 360, "height": 740})
    data = big_survey(deployment)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    sizes = page.evaluate("""[...document.querySelectorAll('[role=gridcell]')].map((b) => {
        const r = b.getBoundingClientRect(); return [r.width, r.height]; })""")
    assert len(sizes) == 400 and min(min(s) for s in sizes) >= 44
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert page.evaluate("(() => { const f = document.querySelector('.grid-scroll'); "
                         "return f.scrollWidth > f.clientWidth; })()")
    assert page.locator(".grid-scroll-note").is_visible()
    # regions: an outline each and the name inside the region's own cells
    assert page.locator("path.region-outline").count() == 2
    for name, first, last in (("old town", "3,3", "7,8"), ("harbour", "14,12", "18,19")):
        inside = page.evaluate("""([name, first, last]) => {
            const t = [...document.querySelectorAll('text.region-name')]
              .find((n) => n.dataset.region === name).getBoundingClientRect();
            const a = document.querySelector(`[data-cell="${first}"]`).getBoundingClientRect();
            const b = document.querySelector(`[data-cell="${last}"]`).getBoundingClientRect();
            return [t.width > 0, t.left >= a.left, t.right <= b.right, t.top >= a.top,
                    t.bottom <= b.bottom];
        }""", [name, first, last])
        assert all(inside), (name, inside)
    # the drawing is not in the way: the point at a region cell's centre is that cell
    assert page.evaluate("""(() => {
        const b = document.querySelector('[data-cell="3,3"]'); b.scrollIntoView();
        const r = b.getBoundingClientRect();
        return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === b;
    })()""")
    # a region button: the region's central cell focused and in view
    mechanism = mechanism_for(Survey.from_dict(data).questions[0])
    central = mechanism.labels[mechanism.central_cell("harbour")]
    page.get_by_role("button", name="harbour", exact=True).click()
    assert page.evaluate("document.activeElement.dataset.cell") == central
    assert visible_in_frame(page, central)
    page.keyboard.press("End")  # to the row's last cell, scrolled into view
    row = central.split(",")[0]
    assert page.evaluate("document.activeElement.dataset.cell") == f"{row},20"
    assert visible_in_frame(page, f"{row},20")
    page.keyboard.press("Enter")
    assert page.locator(".cell-choice").inner_text() == f"Picked: Row {row}, column 20."
    page.locator('[data-cell="17,13"]').click()  # a tap, after scrolling to it
    assert page.locator(".cell-choice").inner_text() == "Picked: Row 17, column 13 (harbour)."
    assert page.problems == []
