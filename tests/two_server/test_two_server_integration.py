"""The estimators on a real parsed two-server survey and the leader's CollectedBatch: the
noise plans and measurement offsets the estimator assumes are the ones the servers use."""

from __future__ import annotations

import numpy as np
import pytest
from ldpsurvey.shared.errors import EstimateError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.encoding import encodings
from ldpsurvey.shared.two_server.estimates import estimate_batch, estimate_two_server, sum_design
from ldpsurvey.shared.two_server.noise import noise_plan
from ldpsurvey.shared.two_server.plans import crosstab_noise_plan, key_epsilon, question_noise_plan
from ldpsurvey.shared.two_server.results import BatchEntry, CollectedBatch
from support.two_server_stand_ins import two_server_survey_dict

QUESTIONS = [
    {"id": "yes", "text": "Yes?", "type": "binary", "central_epsilon": 1.0},
    {"id": "pick", "text": "Pick?", "type": "categorical", "options": ["a", "b", "c"],
     "central_epsilon": 0.5, "local_epsilon": 2.0, "mechanism": "grr"},
    {"id": "age", "text": "Age?", "type": "integer", "min": 18, "max": 90,
     "central_epsilon": 2.0},
    {"id": "kids", "text": "Kids?", "type": "integer", "min": 0, "max": 6,
     "central_epsilon": 1.0, "local_epsilon": 3.0, "mechanism": "geometric"},
    {"id": "scale", "text": "Scale?", "type": "ordinal", "options": ["lo", "mid", "hi"],
     "central_epsilon": 1.0, "local_epsilon": 1.0, "mechanism": "ordinal_exp"},
]


@pytest.fixture
def survey() -> Survey:
    return Survey.from_dict(two_server_survey_dict(QUESTIONS, [["yes", "pick"]]))


def test_plans_match_the_servers_encodings(survey: Survey) -> None:
    encs = encodings(survey)
    for q in survey.questions:
        enc = encs[q.id]
        assert question_noise_plan(q) == noise_plan(enc.kind, key_epsilon(survey, q.id),
                                                    enc.sensitivity)
        if q.type == "integer":
            assert (sum_design(q).offset, sum_design(q).sensitivity) == (enc.offset,
                                                                         enc.sensitivity)
    spec = survey.crosstabs[0]
    assert crosstab_noise_plan(survey, spec).epsilon == key_epsilon(survey, spec.key)
    assert crosstab_noise_plan(survey, spec).sensitivity == encs[spec.key].sensitivity


def _entry(survey: Survey, key: str, sums: list[int], n: int, rejected: int = 0) -> BatchEntry:
    enc = encodings(survey)[key]
    return BatchEntry(key, enc.kind, tuple(sums), n, rejected, key_epsilon(survey, key),
                      enc.sensitivity, enc.offset)


def test_estimates_of_a_collected_batch(survey: Survey) -> None:
    batch = CollectedBatch("ts", 1, "b1", {
        "yes": _entry(survey, "yes", [60], 200, rejected=3),
        "pick": _entry(survey, "pick", [100, 60, 40], 200),
        "age": _entry(survey, "age", [200 * 22], 200),
        "kids": _entry(survey, "kids", [200 * (2 - sum_design(survey.question("kids")).offset)],
                       200),
        "scale": _entry(survey, "scale", [50, 100, 50], 200),
        "crosstab:yes:pick": _entry(survey, "crosstab:yes:pick", [40, 50, 30, 10, 20, 50], 200),
    })
    doc = estimate_batch(survey, batch)
    by_id = {q["question"]: q for q in doc["questions"]}
    assert by_id["yes"]["categories"][1]["estimate"] == pytest.approx(0.3)
    assert by_id["age"]["mean"]["estimate"] == pytest.approx(40.0)
    assert by_id["kids"]["mean"]["estimate"] == pytest.approx(2.0)
    assert by_id["scale"]["mean"]["estimate"] == pytest.approx(2.0, abs=1e-9)
    assert by_id["pick"]["mechanism"] == "two-server+grr"
    assert doc["rejected"] == 3
    cells = doc["crosstabs"][0]["cells"]
    assert len(cells) == 6 and abs(sum(c["consistent"] for c in cells) - 1) < 1e-9
    assert "Against the leader" in doc["guarantees"]["statements"][0]
    assert "age, and" not in doc["guarantees"]["statements"][1]
    assert "your answers to yes, age are exposed" in doc["guarantees"]["statements"][1]


def test_a_mismatched_entry_is_refused(survey: Survey) -> None:
    q = survey.question("pick")
    with pytest.raises(EstimateError, match="count"):
        estimate_two_server(q, _entry(survey, "yes", [1], 10))
    age = survey.question("age")
    wrong = BatchEntry("age", "sum", (100,), 10, 0, 2.0, 72, offset=0)
    with pytest.raises(EstimateError, match="from 0"):
        estimate_two_server(age, wrong)


def test_no_local_question_has_no_local_randomization(survey: Survey) -> None:
    q = survey.question("yes")
    est = estimate_two_server(q, _entry(survey, "yes", [30], 100))
    plan = question_noise_plan(q)
    yes = est.categories[1]
    assert yes.std_error**2 == pytest.approx(0.3 * 0.7 / 100 + 2 * plan.variance / 100**2)
    assert np.isclose(yes.variance_bound, 0.25 / 100 + 2 * plan.variance / 100**2)
