"""one_bit_mean in a series (client/hazmat_memo.py): the α-point drawn once per device and
question, the bit of each end memoized, the ledger charged once per end (at most 2ε)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ldpsurvey.client.hazmat_memo import Memoizer
from ldpsurvey.client.respondent import Respondent
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from scipy.stats import chi2
from support.clients import FakeServer

SERIES = "monthly"


def income_survey(version: int, mechanism: str = "one_bit_mean") -> Survey:
    return Survey.from_dict({
        "id": "income", "title": "Income", "version": version, "series": SERIES,
        "questions": [{"id": "income", "text": "Income last month?", "type": "decimal",
                       "min": 0, "max": 1000, "resolution": 10, "epsilon": 1.0,
                       "mechanism": mechanism}]})


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    s = FakeServer(lambda m, p, b: (201, {"accepted": [b["submission_id"]], "duplicates": []}))
    yield s
    s.close()


def respondent(server: FakeServer, tmp_path: Path) -> Respondent:
    return Respondent(server.url, state_dir=str(tmp_path / "state"), warn=lambda m: None)


def alpha_of(r: Respondent) -> int:
    """This device's α for the question: the largest grid index rounded to min."""
    mech: Any = mechanism_for(income_survey(1).question("income"))
    ends = [r.memo._series_answer(mech, SERIES, "income", 10 * j) for j in range(mech.k)]
    assert ends == sorted(ends) and set(ends) <= {0, 1000}
    return ends.count(0) - 1


def test_repeated_rounds_of_an_unchanged_value_send_the_same_bit(server: FakeServer,
                                                                  tmp_path: Path) -> None:
    r = respondent(server, tmp_path)
    reports = []
    for version in range(1, 7):
        submission = r.answer(income_survey(version), {"income": 430})
        assert r.submit(submission).status == "sent"
        reports.append(submission.reports["income"])
    assert len(set(reports)) == 1 and reports[0] in (0, 1)
    entries = r.ledger.entries()
    assert [e["reused"] for e in entries] == [False] + [True] * 5
    assert r.ledger.spend_by_series()[SERIES]["income"]["epsilon"] == pytest.approx(
        mechanism_for(income_survey(1).question("income")).realized_epsilon())


def test_a_value_that_stays_on_its_side_of_alpha_is_free_and_a_crossing_costs_once(
        server: FakeServer, tmp_path: Path) -> None:
    """Values on one side of α share the end's bit and tag (charged once); crossing to the
    other side charges the second end once; back and forth after that costs nothing: at most
    2ε over any number of rounds and values."""
    r = respondent(server, tmp_path)
    alpha = alpha_of(r)
    low = [10 * j for j in range(alpha + 1)]            # rounded to min
    high = [10 * j for j in range(alpha + 1, 101)]      # rounded to max
    answers = [*low[:3], *high[-3:], *low[-2:], *high[:2]]
    reports = {}
    for version, answer in enumerate(answers, start=1):
        submission = r.answer(income_survey(version), {"income": answer})
        r.submit(submission)
        reports.setdefault(answer in high, set()).add(submission.reports["income"])
    assert all(len(bits) == 1 for bits in reports.values())  # one memoized bit per end
    charged = [e for e in r.ledger.entries() if not e["reused"]]
    assert len(charged) == len(reports) <= 2
    epsilon = mechanism_for(income_survey(1).question("income")).realized_epsilon()
    assert r.ledger.spend_by_series()[SERIES]["income"]["epsilon"] == pytest.approx(
        len(reports) * epsilon)


def test_todays_per_value_memo_charges_every_distinct_value(server: FakeServer,
                                                           tmp_path: Path) -> None:
    """The comparison docs/decimal.md states: duchi in a series memoizes per grid value."""
    r = respondent(server, tmp_path)
    for version, answer in enumerate((100, 200, 300, 100), start=1):
        r.submit(r.answer(income_survey(version, "duchi"), {"income": answer}))
    assert r.ledger.spend_by_series()[SERIES]["income"]["distinct_answers"] == 3


class _Device(Memoizer):
    """The client's memo with a given secret (many devices without a state directory each)."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret

    def _secret(self) -> bytes:
        return self.secret


def test_the_average_over_rounds_has_the_exact_series_variance() -> None:
    """Devices answering R = 3 rounds through the client's memo (α and the bits from each
    device's keyed stream): the average over rounds of the rounds' mean estimates, over
    independent populations of devices, is unbiased with the exact variance
    `series_mean_variance` (which is not the one-round variance over R). Two-sided 99% χ² band
    on the replicates' variance (false alarm 1%); the grand mean within 3.29 s.e. (0.1%)."""
    mech: Any = mechanism_for(income_survey(1).question("income"))
    histories = [[10, 10, 10], [40, 40, 60], [90, 20, 50], [100, 100, 100], [0, 0, 30]] * 6
    step2 = 10**2  # the variance is on the grid's index scale: times resolution² in dollars
    sigma2 = mech.series_mean_variance(histories) * step2
    truth = float(np.mean(histories)) * 10
    replicates = 200
    averages = np.empty(replicates)
    for r in range(replicates):
        rounds = []
        for t in range(3):
            reports = np.array([
                _Device(r.to_bytes(4, "big") + i.to_bytes(4, "big") + bytes(24)).report(
                    mech, SERIES, "income", 10 * h[t])
                for i, h in enumerate(histories)])
            mean = mech.estimate(mech.aggregate_many(reports)).mean
            rounds.append(mean.estimate)
        averages[r] = np.mean(rounds)
    statistic = (replicates - 1) * averages.var(ddof=1) / sigma2
    low, high = chi2.ppf([0.005, 0.995], replicates - 1)
    assert low <= statistic <= high, (statistic, low, high)
    assert abs(averages.mean() - truth) <= 3.29 * math.sqrt(sigma2 / replicates)
    one_round = mech.fixed_population_variance(
        np.bincount([h[0] for h in histories], minlength=mech.k).tolist()) * step2
    assert sigma2 > one_round / 3  # fresh noise each round would give about this
