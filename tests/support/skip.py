"""A survey with skip logic for the end-to-end tests (CLI, page, server)."""

from __future__ import annotations

from typing import Any


def skip_survey(survey_id: str) -> dict[str, Any]:
    """A randomized gate, two follow-ups on it (one on both), a disclosed region and a
    randomized question that applies only in one region (a condition on disclosed answers)."""
    return {
        "id": survey_id, "title": "Use and frequency", "version": 1,
        "questions": [
            {"id": "used", "text": "Have you used cannabis in the past year?",
             "type": "binary", "epsilon": 1.0},
            {"id": "freq", "text": "How often?", "type": "categorical", "epsilon": 1.0,
             "options": ["rarely", "monthly", "weekly"], "relevant": "used"},
            {"id": "days", "text": "On how many days last month?", "type": "integer",
             "epsilon": 1.0, "min": 0, "max": 30,
             "relevant": "used and freq in ['monthly', 'weekly']"},
            {"id": "region", "text": "Where do you live?", "type": "categorical",
             "disclosed": True, "options": ["north", "south"]},
            {"id": "clinic", "text": "Have you been to the northern clinic?",
             "type": "binary", "epsilon": 1.0, "relevant": "region == 'north'"},
        ],
    }


def report_shape(report: Any) -> Any:
    """A report's JSON shape: its type, and the shape of each element of a list."""
    if isinstance(report, list):
        return ["list", *(report_shape(r) for r in report)]
    return type(report).__name__


def skip_two_server(helper_url: str, helper_key: bytes, leader_key: bytes,
                    survey_id: str) -> dict[str, Any]:
    """A two-server survey: a yes/no gate, a yes/no follow-up, a categorical one with a local
    ε0 and a declared crosstab with the gate, and an integer follow-up of a follow-up."""
    from support.two_server import two_server_survey

    data = two_server_survey(helper_url, helper_key, leader_key, survey_id=survey_id,
                             min_batch=4)
    data["questions"] = [
        data["questions"][0],  # smoker: yes/no
        {"id": "daily", "text": "Daily?", "type": "binary", "central_epsilon": 1.0,
         "relevant": "smoker"},
        {"id": "brand", "text": "Brand?", "type": "categorical", "central_epsilon": 1.0,
         "local_epsilon": 2.0, "options": ["a", "b", "c"], "relevant": "smoker"},
        {"id": "packs", "text": "Packs a week?", "type": "integer", "central_epsilon": 1.0,
         "min": 0, "max": 10, "relevant": "daily"},
    ]
    data["crosstabs"] = [["smoker", "brand"]]
    return data
