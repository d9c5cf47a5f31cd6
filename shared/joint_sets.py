"""A multiselect question in a crosstab: one option at a time, "selected" against "not".

Its options overlap (a respondent may select several), so the question has no table of cells
to cross; one option of it does: the side "q:option" has the two cells "option" and
"not option", exactly as a declared group of a categorical question is a side against the rest
(joint_features.group_encoder). Every multiselect mechanism is linear per option in its
report's integer features (shared/joint_features.py's docstring):

- option_rr, set_ue (k report bits) and psfo_olh (the k options' support bits of [seed,
  bucket]): φ = the support bits S_j, X_a = (S_a − q)/(p − q), X_a² = (S_a(1 − 2q) + q²)/(p − q)²
  (S² = S);
- psfo_grr (one index among k + m − required_min values): φ = its one-hot, X_a = (1[y = a] −
  q)/(p − q), any function of y linear in the one-hot.

E[X_a | S] = [a in S] whatever else S holds (set_base.py), and X_not = 1 − X_a, so the joint
estimator, its exact square, the floor and the worst case of shared/crosstab.py apply to the
two answers "selected" and "not selected": `expected` gives each feature's mean under either
(the features of other options enter the two rows only through terms these means fix). The
question's full encoder (all k options) is what a declared crosstab's joint aggregate stores:
one aggregate serves every option. It is marked `sets` and refused by `estimate_crosstab`
(shares that overlap are no table).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .errors import CrosstabError
from .joint_encoder import Encoder, with_constant


def set_encoder(mechanism: Any) -> Any:
    """The full encoder of a multiselect question's reports (features of all k options)."""
    k = mechanism.k
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    d = p - q
    if mechanism.name == "psfo_grr":  # one index: its one-hot over every value
        size = mechanism.size
        indicator = np.zeros((k, size))
        indicator[np.arange(k), np.arange(k)] = 1.0
        estimator = np.hstack([np.zeros((k, 1)), (indicator - q) / d])
        square = np.hstack([np.zeros((k, 1)), ((indicator - q) / d) ** 2])

        def featurize(reports: Any) -> np.ndarray:
            index = np.asarray(reports).astype(np.int64).reshape(-1)
            out = np.zeros((index.size, size + 1))
            out[:, 0] = 1.0
            out[np.arange(index.size), index + 1] = 1.0
            return out
    else:  # support bits of the k options
        estimator = np.hstack([np.full((k, 1), -q / d), np.eye(k) / d])
        square = np.hstack([np.full((k, 1), q * q / d**2), np.eye(k) * (1 - 2 * q) / d**2])

        def featurize(reports: Any) -> np.ndarray:
            return with_constant(mechanism.support_bits(reports))
    return Encoder(mechanism.question_id, mechanism.name, tuple(mechanism.labels), estimator,
                   square, _expected(mechanism, estimator.shape[1]), np.eye(k), featurize,
                   lambda index: np.asarray(index, dtype=np.int64), sets=True)


def _expected(mechanism: Any, width: int) -> np.ndarray:
    """E[φ̃ | answer] for the k "answers" where only option j is selected (the full encoder's
    columns; `option_encoder` builds the two that matter for one option)."""
    k = mechanism.k
    return np.column_stack([_feature_means(mechanism, width, j, True) for j in range(k)])


def _feature_means(mechanism: Any, width: int, option: int, selected: bool) -> np.ndarray:
    """E[φ̃] when `option` is (or is not) selected: P[S_option] = p (or q) and the other
    features at q, which is all the estimator and its square read of them; for psfo_grr's
    one-hot the remaining mass is spread evenly, its square being constant off the option."""
    p, q = float(mechanism.p_star), float(mechanism.q_star)
    on = p if selected else q
    means = np.zeros(width)
    means[0] = 1.0
    if mechanism.name == "psfo_grr":
        means[1:] = (1 - on) / (width - 2)
    else:
        means[1:] = q
    means[1 + option] = on
    return means


def option_encoder(encoder: Any, mechanism: Any, option: str) -> Any:
    """The side "question:option" — the option selected against not — of a multiselect
    question's full encoder (module docstring)."""
    labels = list(encoder.cells)
    if option not in labels:
        raise CrosstabError(f"{option!r} is not an option of {encoder.question_id!r} (its "
                            f"options: {', '.join(repr(o) for o in labels)})",
                            {"question": encoder.question_id})
    a = labels.index(option)
    width = encoder.width
    unit = np.zeros(width)
    unit[0] = 1.0
    chosen = encoder.estimator[a]
    estimator = np.stack([chosen, unit - chosen])
    square = np.stack([encoder.square[a], unit - 2 * chosen + encoder.square[a]])
    expected = np.column_stack([_feature_means(mechanism, width, a, True),
                                _feature_means(mechanism, width, a, False)])
    return replace(encoder, cells=(option, f"not {option}"), estimator=estimator,
                   square=square, expected=expected, membership=np.eye(2),
                   cell_of=lambda selected: np.where(np.asarray(selected, dtype=bool), 0, 1),
                   group=option, sets=False)


def whole_question_refused(question_id: str, options: Any) -> CrosstabError:
    """Asked to cross a multiselect question as a whole: say how to cross one option."""
    listed = ", ".join(f"'{question_id}:{o}'" for o in list(options)[:3])
    return CrosstabError(f"{question_id!r} is a multiselect question: its options overlap (a "
                         "respondent may select several), so it is crossed one option at a "
                         f"time, that option against not selecting it: e.g. {listed}",
                         {"question": question_id})
