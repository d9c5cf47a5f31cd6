"""The respondent page and a decimal follow-up on a randomized answer (asked_grid): the page has
no port of asked_grid yet, so it refuses the survey clearly, naming the mechanism, instead of
drawing anything (docs/decimal.md); such a survey is answered with `ldpsurvey respond`."""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.survey import Survey

SURVEY = Survey.from_dict({"id": "gamble", "title": "Gambling", "version": 1, "questions": [
    {"id": "gambles", "type": "binary", "text": "Do you gamble?", "epsilon": 1.0},
    {"id": "lost", "type": "decimal", "text": "If yes: how much did you lose?",
     "relevant": "gambles == true", "min": 0, "max": 500, "resolution": 5, "epsilon": 2.0}]})


def test_the_page_refuses_a_decimal_follow_up_naming_asked_grid(js_page: Any,
                                                                 web_root_url: str) -> None:
    survey = SURVEY.to_dict()
    found = js_page.evaluate("""async ([root, survey]) => {
      const S = await import(root + "js/skip_logic.js");
      const M = await import(root + "js/mechanisms.js");
      const plan = S.skipPlan(survey);
      const lost = survey.questions.find((q) => q.id === "lost");
      try { M.mechanismFor(lost, { notAsked: plan.get("lost").notAsked }); return "accepted"; }
      catch (e) { return [plan.get("lost").notAsked, e.name, e.message]; }
    }""", [web_root_url, survey])
    assert found[0] is True and found[1] == "UnsupportedMechanism"
    assert '"asked_grid" is not supported in the browser' in found[2]
