"""A survey whose invitation codes carry a stratified cluster design, answered by simulated
respondents through the real server: the fixture of the design-based report tests.

The population: 4 strata of PSUs (clusters) of units; the sample: PSUs per stratum, units per
PSU, unequal weights by stratum. Answers depend on the stratum and the PSU (so clustering and
weighting matter); each answer is randomized on the secure path (`Mechanism.perturb`), as a
device does. Disclosed `region` and `sex` are the calibration covariates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ldpsurvey.shared.mechanisms import Mechanism, mechanism_for
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Survey

from support.r_oracle import r_numbers, r_strings

SURVEY: dict[str, Any] = {
    "id": "wave-2026", "title": "Wellbeing wave 2026", "version": 1,
    "questions": [
        {"id": "region", "text": "Where do you live?", "type": "categorical",
         "options": ["north", "south", "east", "west"], "disclosed": True},
        {"id": "sex", "text": "Your sex", "type": "categorical",
         "options": ["female", "male"], "disclosed": True},
        {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "mood", "text": "How is your mood?", "type": "ordinal", "epsilon": 2.0,
         "options": ["low", "mid", "high"], "mechanism": "grr",
         "groups": {"not low": ["mid", "high"]}},
        {"id": "drinks", "text": "Drinks last week?", "type": "integer", "epsilon": 1.0,
         "min": 0, "max": 20, "mechanism": "geometric", "optional": True},
    ],
}
REGIONS = ("north", "south", "east", "west")
SEXES = ("female", "male")


@dataclass(frozen=True)
class Unit:
    id: str
    weight: float
    stratum: str
    psu: str
    fpc: int
    answers: dict[str, Any]


def population_frame(seed: int = 7, psus_per_stratum: int = 6, units_per_psu: int = 8
                     ) -> list[Unit]:
    """The sampled units with their design and true answers (numpy: a simulation)."""
    rng = np.random.default_rng(seed)
    units = []
    for h, region in enumerate(REGIONS):
        weight = (20.0, 35.0, 50.0, 80.0)[h]
        for j in range(psus_per_stratum):
            level = rng.normal(0.0, 0.8)  # the cluster effect
            for i in range(units_per_psu):
                p_smoke = 1 / (1 + np.exp(-(-1.2 + 0.4 * h + level)))
                mood = int(np.clip(round(1 + level + rng.normal(0, 0.8)), 0, 2))
                units.append(Unit(
                    id=f"{region}-{j}-{i}", weight=weight, stratum=region, psu=f"psu{j}",
                    fpc=60, answers={
                        "region": region, "sex": SEXES[int(rng.random() < 0.5)],
                        "smoker": bool(rng.random() < p_smoke),
                        "mood": ("low", "mid", "high")[mood],
                        **({} if rng.random() < 0.1 else
                           {"drinks": int(np.clip(rng.poisson(3 + 2 * h + 2 * level), 0, 20))}),
                    }))
    return units


def frame_csv(units: list[Unit], fpc: bool = True) -> str:
    if not fpc:
        return "\n".join(["id,weight,stratum,psu",
                          *(f"{u.id},{u.weight!r},{u.stratum},{u.psu}" for u in units)]) + "\n"
    lines = ["id,weight,stratum,psu,fpc"]
    lines += [f"{u.id},{u.weight!r},{u.stratum},{u.psu},{u.fpc}" for u in units]
    return "\n".join(lines) + "\n"


def encoded(mechanism: Mechanism, value: Any) -> np.ndarray:
    """One true answer as `perturb_many` takes it: an index, or a multiselect answer's row
    of selected options."""
    code = mechanism.encode(value)
    if hasattr(mechanism, "check_sets"):  # a set mechanism: (1, k) booleans from the bitmask
        return np.array([[bool(code >> j & 1) for j in range(mechanism.k)]])
    return np.array([code])


KEYED = {**SURVEY, "id": "keyed-2026", "questions": [
    {"id": "resp_no", "text": "Your respondent number (printed on your letter)",
     "type": "integer", "min": 1, "max": 99999, "disclosed": True, "optional": True},
    *SURVEY["questions"]]}


def mechanisms(survey: dict[str, Any] | None = None) -> dict[str, Mechanism]:
    parsed = Survey.from_dict(survey or SURVEY)
    return {q.id: mechanism_for(q) for q in parsed.questions}


@dataclass(frozen=True)
class Built:
    """A database of a designed survey: who responded, in submission order."""

    path: Path
    survey_id: str
    units: list[Unit]
    responded: list[Unit]
    token: str


def build(path: Path, *, survey: dict[str, Any] | None = None, invites: bool = True,
          seed: int = 11, response_rate: float = 0.85, units: list[Unit] | None = None,
          fpc: bool = True, allow_lonely_psu: bool = False) -> Built:
    """Publish the survey, make one invitation code per unit carrying its design (`invites`;
    else the keyed survey's respondents send their unit number as `resp_no`), and store the
    submissions of the units that respond: reports drawn by `perturb_many` from a fixed seed
    (deterministic), posted through the server's API."""
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from ldpsurvey.server.invites import create_designed
    from ldpsurvey.shared.design_frame import parse_frame
    from ldpsurvey.shared.mechanisms.base import plain

    from support.server_data import manifest

    survey = survey or SURVEY
    units = units if units is not None else population_frame()
    app = create_app({"DATABASE": str(path), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    token = create_token(store, "designed")[1]
    client = app.test_client()
    assert client.post("/api/surveys", json=manifest(survey),
                       headers={"Authorization": f"Bearer {token}"}).status_code == 201
    frame = parse_frame(frame_csv(units, fpc=fpc), allow_lonely_psu=allow_lonely_psu)
    codes = dict(create_designed(store, survey["id"], frame,
                                 allow_lonely_psu=allow_lonely_psu)) if invites else {}
    rng = np.random.default_rng(seed)
    responded = [u for u in units if rng.random() < response_rate]
    mechs = mechanisms(survey)
    parsed = Survey.from_dict(survey)
    bodies = []
    for number, unit in enumerate(responded):
        answers = dict(unit.answers)
        if "resp_no" in mechs:
            answers["resp_no"] = units.index(unit) + 1
        reports = {}
        for qid, value in answers.items():
            if value is not NOT_ASKED:  # as the device keeps it (a decimal: to its grid)
                question = parsed.question(qid)
                value = question.unit.device_answer(question, value)
            reports[qid] = plain(mechs[qid].perturb_many(encoded(mechs[qid], value), rng))[0]
        body: dict[str, Any] = {"submission_id": f"00000000-0000-4000-8000-{number:012d}",
                                "answers": reports}
        if invites:
            body["invite"] = codes[unit.id]
        bodies.append(body)
    for start in range(0, len(bodies), 50):
        response = client.post(f"/api/surveys/{survey['id']}/submissions",
                               json={"submissions": bodies[start:start + 50]})
        assert response.status_code == 200, response.get_json()
    store.close()
    return Built(path, survey["id"], units, responded, token)


# Skip logic: three questions that apply only to smokers (their condition reads the randomized
# `smoker`, so every respondent sends a report, "not asked" being one of its values).
ASKED_SURVEY = {**SURVEY, "id": "asked-2026", "questions": [
    *SURVEY["questions"],
    {"id": "brand", "text": "Which brand?", "type": "categorical", "epsilon": 2.0,
     "options": ["a", "b", "c"], "mechanism": "grr", "relevant": "smoker",
     "groups": {"a or b": ["a", "b"]}},
    {"id": "craving", "text": "How strong is the craving?", "type": "ordinal", "epsilon": 2.0,
     "options": ["mild", "strong", "severe"], "mechanism": "grr", "relevant": "smoker"},
    {"id": "cigs", "text": "Cigarettes a day?", "type": "integer", "epsilon": 2.0, "min": 0,
     "max": 20, "relevant": "smoker"}]}
BRAND, CRAVING = ("a", "b", "c"), ("mild", "strong", "severe")


def asked_units() -> list[Unit]:
    rng = np.random.default_rng(5)
    out = []
    for u in population_frame():
        answers = dict(u.answers)
        if answers["smoker"]:
            answers["brand"] = BRAND[int(rng.integers(0, 3)) if u.stratum != "west" else 2]
            answers["craving"] = CRAVING[min(2, int(rng.poisson(0.8)))]
            answers["cigs"] = min(20, int(rng.poisson(8 if u.stratum == "east" else 4)))
        else:  # what the device sends
            answers["brand"] = answers["craving"] = answers["cigs"] = NOT_ASKED
        out.append(Unit(u.id, u.weight, u.stratum, u.psu, u.fpc, answers))
    return out


def keyed_frame_csv(units: list[Unit], fpc: bool = True) -> str:
    """The frame of the keyed survey: ids are the units' respondent numbers."""
    renamed = [Unit(str(i + 1), u.weight, u.stratum, u.psu, u.fpc, u.answers)
               for i, u in enumerate(units)]
    return frame_csv(renamed, fpc)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# R: the stratified cluster design of a survey's rows in d.csv (columns w, stratum, psu,
# region, sex) raked to the population margins the design tests use (region north 3,000,
# south 5,000, east 7,000, west 9,000; 11,500 men of 24,000), as `cal`.
RAKED_R = f"""
d <- read.csv("d.csv")
d$region <- factor(d$region, levels = c("north", "south", "east", "west"))
d$sex <- factor(d$sex, levels = c("female", "male"))
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
pop <- {r_numbers([24000.0, 5000, 7000, 9000, 11500])}
names(pop) <- {r_strings(["(Intercept)", "regionsouth", "regioneast", "regionwest", "sexmale"])}
cal <- calibrate(des, ~region + sex, population = pop, calfun = "raking", epsilon = 1e-13,
                 maxit = 200)
"""
