"""What a designer should hear before respondents find out: warnings `plan` and `publish` print.

A survey can be valid and still fail its respondents:
- it costs more ε than the respondents' default limit (client/budget.py DEFAULT_MAX_EPSILON; the
  page's manifest.js holds the same number): every device that keeps the default refuses it,
  including every browser on the page the aggregator serves, which has no way to raise it;
- a location question has no background image: on a phone it is a blank grid of small squares
  with nothing to find one's place by.
Both commands print the same lines from `survey_warnings`, one warning a line.
"""

from __future__ import annotations

from ldpsurvey.client.budget import DEFAULT_MAX_EPSILON, Budget
from ldpsurvey.client.errors import PolicyError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.wording import epsilon_text


def survey_warnings(survey: Survey) -> list[str]:
    """Warnings about `survey`, each a line starting 'warning:' (empty: nothing to say)."""
    warnings = []
    limit = _over_default_limit(survey)
    if limit is not None:
        warnings.append(limit)
    for q in survey.questions:
        warnings += q.unit.survey_warnings(q)  # e.g. a location grid without a background
    return warnings


def _over_default_limit(survey: Survey) -> str | None:
    """The warning when respondents with the default limit refuse the survey, as their devices
    decide it (the same check, `Budget.check`, every view of a two-server survey included)."""
    try:
        Budget().check(survey)
    except PolicyError as exc:
        details = exc.details if isinstance(exc.details, dict) else {}
        if "question" in details:
            what = (f"question {details['question']} alone costs ε = "
                    f"{epsilon_text(details['epsilon'])}")
        else:
            what = (f"answering it costs ε = {epsilon_text(details.get('total_epsilon', 0.0))} "
                    f"in total")
        return (f"warning: {what}, above the respondents' default limit of ε = "
                f"{DEFAULT_MAX_EPSILON:g}: every respondent who keeps the default refuses it (all "
                f"of them on the page the server serves at /s/{survey.id}). Lower the ε of its "
                f"questions (of a location question: epsilon_geo, the cell size or the number of "
                f"cells) until each question and the total is at most "
                f"{DEFAULT_MAX_EPSILON:g}, or split it into "
                f"surveys; or ask respondents to raise their limit (`ldpsurvey respond "
                f"--max-epsilon`, `ldpsurvey page export --max-epsilon` for a page you host)")
    return None
