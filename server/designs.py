"""The designs of a survey's respondents, for design-based analysis away from the database.

`ldpsurvey invites create --design` stores each invitation code with its sampled unit's design;
a submission made with the code is joined to it. An analyst who reads the server over HTTP
(`ldpsurvey report --server ... --rake ...`) takes the stored reports from
GET /api/surveys/<id>/submissions.jsonl and the designs from GET .../designs.jsonl (analyst
token), and computes the design-based estimates on their own machine with the same functions
as `--db`. The designs are the operator's knowledge, no respondent's answer (docs/weights.md).
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from .store import Store


def design_lines(store: Store, survey_id: str) -> Iterator[str]:
    """One JSON line per invitation code that carries a design: the id of the submission it
    admitted (null: the unit has not responded), its weight, stratum, PSU, fpc and random
    group (null where the frame had no such column). The codes themselves are not served."""
    for submission_id, d in store.invite_designs(survey_id):
        yield orjson.dumps({"submission_id": submission_id, "weight": d.weight,
                            "stratum": d.stratum, "psu": d.psu, "fpc": d.fpc,
                            "group": d.group}).decode() + "\n"
