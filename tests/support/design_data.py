"""A stratified cluster sample with unequal weights, an fpc, randomized answers and disclosed
covariates: the fixture the design-based tests and R's survey oracle share.

Everything is drawn from numpy with a fixed seed (simulation only: these reports are never sent
anywhere). 6 strata with 2 to 7 PSUs (27 PSUs), 4 to 14 respondents per PSU, lognormal weights,
the population PSU count N_h = 3·n_h + 1; a categorical question (3 options) answered through
GRR at ε = 1 with a cluster effect, an integer question (0..20) through geometric noise at
ε = 2, and disclosed covariates sex (2 categories), region (3) and age (a number).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ldpsurvey.shared.design import Design, PseudoValues, pseudo_values
from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.mechanisms.grr import GRR
from ldpsurvey.shared.survey import Question

OPTIONS = ("never", "sometimes", "often")


@dataclass
class Fixture:
    stratum: np.ndarray
    psu: np.ndarray          # PSU label within stratum
    weight: np.ndarray
    fpc: np.ndarray          # population PSUs of the row's stratum
    truth: np.ndarray        # true answer index of the categorical question
    reports: np.ndarray      # its GRR reports
    count_truth: np.ndarray  # the integer question's true answers
    count_reports: np.ndarray
    sex: np.ndarray
    region: np.ndarray
    age: np.ndarray
    grr: Mechanism
    geometric: Mechanism
    question: Question
    count_question: Question

    @property
    def n(self) -> int:
        return int(self.weight.size)

    def design(self, fpc: bool = True, lonely_psu: str = "fail") -> Design:
        return Design.build(self.weight, self.stratum, self.psu,
                            self.fpc if fpc else None, lonely_psu=lonely_psu)

    def pseudo(self) -> PseudoValues:
        return pseudo_values(self.question, self.grr, self.reports)

    def count_pseudo(self) -> PseudoValues:
        return pseudo_values(self.count_question, self.geometric, self.count_reports)

    def table(self) -> dict[str, np.ndarray]:
        """The columns R reads (pseudo-values z1..z3, the integer report as `y`)."""
        z = self.pseudo().values
        return {"stratum": self.stratum, "psu": self.psu, "weight": self.weight,
                "fpc": self.fpc, "z1": z[:, 0], "z2": z[:, 1], "z3": z[:, 2],
                "y": self.count_reports.astype(float), "sex": self.sex,
                "region": self.region, "age": self.age.astype(float),
                "truth": self.truth}


def question(qid: str = "use", qtype: str = "categorical") -> Question:
    if qtype == "integer":
        return Question(id=qid, type="integer", text="How many?", epsilon=2.0,
                        mechanism="geometric", min=0, max=20)
    return Question(id=qid, type=qtype, text="How often?", epsilon=1.0, mechanism="grr",
                    options=OPTIONS)


def fixture(seed: int = 35) -> Fixture:
    rng = np.random.default_rng(seed)
    strata, psus, weights, fpcs = [], [], [], []
    effects = []
    for h, n_h in enumerate((2, 3, 4, 5, 6, 7)):
        for j in range(n_h):
            size = int(rng.integers(4, 15))
            strata += [f"s{h}"] * size
            psus += [j + 1] * size
            weights.append(np.exp(rng.normal(3.0 + 0.2 * h, 0.5, size)))
            fpcs += [3 * n_h + 1] * size
            effects += [rng.normal(0, 0.6)] * size
    weight = np.concatenate(weights)
    n = weight.size
    effect = np.array(effects)
    sex = rng.integers(0, 2, n)
    region = rng.integers(0, 3, n)
    age = rng.integers(18, 81, n)
    logits = np.column_stack([np.zeros(n), -0.5 + effect + 0.4 * sex, -1.0 + effect
                              + 0.3 * region])
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    truth = (rng.random(n)[:, None] > np.cumsum(probs, axis=1)).sum(axis=1)
    grr = GRR(1.0, OPTIONS, question_id="use")
    geometric = Geometric(2.0, range(0, 21), question_id="count")
    count_truth = np.clip(np.round(6 + 4 * effect + 2 * sex + rng.normal(0, 3, n)), 0,
                          20).astype(np.int64)
    return Fixture(stratum=np.array(strata), psu=np.array(psus), weight=weight,
                   fpc=np.array(fpcs, dtype=float), truth=truth,
                   reports=grr.perturb_many(truth, rng), count_truth=count_truth,
                   count_reports=geometric.perturb_many(count_truth, rng), sex=sex,
                   region=region, age=age, grr=grr, geometric=geometric,
                   question=question("use"), count_question=question("count", "integer"))
