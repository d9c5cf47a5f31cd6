"""The multiselect mechanisms by name, and the choice `auto` makes among them for (k, m, ε).

As for categorical questions (shared/mechanisms/__init__.py), `auto` ranks the mechanisms that
can serve the shape and whose report stays under the size limit by the variance of an option's
share with one report, averaged over the k options, worst case over the truth
(`SetMechanism.set_variances`): the expected squared error per option. The per-option worst
case (an option everyone selects) is what the planner's margin of error guarantees; where the
two disagree (psfo_grr pays most for options nearly everyone selects, and least for the rarely
selected ones check-all-that-apply questions are full of) docs/multiselect.md shows both.
"""

from __future__ import annotations

from typing import Any

from ..errors import SurveyError
from .option_rr import OptionRR
from .psfo_grr import PSFOGRR
from .psfo_olh import PSFOOLH
from .set_base import SetMechanism, SetShape
from .set_ue import SetUE

SET_MECHANISMS: dict[str, type[SetMechanism]] = {
    cls.name: cls for cls in (OptionRR, SetUE, PSFOGRR, PSFOOLH)
}


def set_candidates(shape: SetShape, epsilon: float, size_limit: int
                   ) -> list[tuple[float, float, str]]:
    """(average variance, worst-case variance, name) of every multiselect mechanism that can
    be built for this shape at ε under the report size limit, best (lowest average) first."""
    found = []
    for name, cls in SET_MECHANISMS.items():
        if (cls.misfit(shape.k, epsilon) is None and cls.shape_misfit(shape) is None
                and cls.report_bytes(shape.k, epsilon) <= size_limit):
            worst, average = cls.set_variances(shape, epsilon)
            found.append((average, worst, name))
    return sorted(found)


def choose_set_mechanism(question: Any, size_limit: int, where: str) -> tuple[str, str]:
    """(name, reason) of the mechanism `auto` picks for a multiselect question."""
    shape = question.multiselect
    ranked = set_candidates(shape, question.epsilon, size_limit)
    if not ranked:
        problems = {cls.misfit(shape.k, question.epsilon) for cls in SET_MECHANISMS.values()}
        problem = next((p for p in problems if p is not None), None)
        if problem is not None:
            field = "epsilon" if problem.field == "epsilon" else "options"
            raise SurveyError(f"{where}.{field}", f"no mechanism can be built ({problem.problem})")
        raise SurveyError(f"{where}.mechanism", f"no multiselect mechanism fits k={shape.k} at "
                          f"epsilon={question.epsilon:g} under the {size_limit}-byte report limit")
    best_var, _best_worst, best = ranked[0]
    others = ", ".join(f"{name} {var:.4g}" for var, _, name in ranked[1:])
    reason = (f"auto: lowest worst-case variance averaged over options with one report at "
              f"k={shape.k}, max_selected={shape.max_selected}, epsilon={question.epsilon:g}: "
              f"{best} {best_var:.4g}" + (f" (vs {others})" if others else "")
              + f"; reports under {size_limit} bytes")
    return best, reason
