"""The respondent page and an integer question asked with a mean mechanism (duchi, piecewise,
hybrid; issue 41): the page has no integer port of them yet, so it refuses the survey clearly,
naming the mechanism (UnsupportedMechanism: refusal.unsupported), instead of calling it a
mismatched survey or drawing anything (docs/decimal.md, "Wide integer ranges"); such a survey
is answered with `ldpsurvey respond`."""

from __future__ import annotations

from typing import Any

import pytest
from ldpsurvey.shared.survey import Survey


@pytest.mark.parametrize("name", ["duchi", "piecewise", "hybrid", "one_bit_mean"])
def test_the_page_refuses_an_integer_mean_mechanism_naming_it(js_page: Any, web_root_url: str,
                                                              name: str) -> None:
    question = Survey.from_dict({"id": "spend", "title": "Spending", "version": 1,
                                 "questions": [{"id": "amount", "type": "integer",
                                                "text": "Spent?", "min": 0, "max": 10000,
                                                "epsilon": 1.0, "mechanism": name}]}
                                ).to_dict()["questions"][0]
    found = js_page.evaluate("""async ([root, q]) => {
      const M = await import(root + "js/mechanisms.js");
      try { M.mechanismFor(q); return "accepted"; } catch (e) { return [e.name, e.message]; }
    }""", [web_root_url, question])
    assert found[0] == "UnsupportedMechanism"
    assert f'"{name}" on an integer question is not supported in the browser' in found[1]
