"""The two-server path asks a question's type unit (issue 40): shared/two_server names no
question type, imports nothing of the survey schema back, and a type it has never seen is
measured, noised and estimated by what its unit says, without a line of two-server code."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ldpsurvey.shared.question_types import QuestionType
from ldpsurvey.shared.two_server.encoding import question_encoding, question_index
from ldpsurvey.shared.two_server.estimates import estimate_two_server
from ldpsurvey.shared.two_server.plans import question_noise_plan
from support.structure import (
    _PY_NAME_SWITCH,
    _PY_TYPE_COMPARISON,
    ROOT,
    python_import_graph,
)
from support.two_server_stand_ins import Entry

SCHEMA = {"shared.survey", "shared.translations", "shared.location_question",
          "shared.multiselect_question"}


def test_shared_two_server_names_no_question_type() -> None:
    switches = [f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
                for path in sorted((ROOT / "shared" / "two_server").glob("*.py"))
                for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if _PY_NAME_SWITCH.search(line) or _PY_TYPE_COMPARISON.search(line)]
    assert not switches, switches


def test_shared_two_server_imports_nothing_of_the_schema_back() -> None:
    """shared/survey.py imports two_server.config and two_server.encoding; none of
    shared/two_server may import the schema's modules (inside functions and under
    TYPE_CHECKING too: the graph counts every import) but upload.py, which survey.py
    does not reach."""
    graph = python_import_graph()
    back = sorted(f"{name} -> {target}" for name, targets in graph.items()
                  if name.startswith("shared.two_server") and name != "shared.two_server.upload"
                  for target in targets & SCHEMA)
    assert not back, back


class PercentType(QuestionType):
    """A type no path knows: a whole percentage, measured as a Prio3 Sum of its value."""

    name = "percent"

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        return measure.sum(0, 100)

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        return int(value)


def test_a_new_type_is_measured_noised_and_estimated_by_its_unit() -> None:
    q = SimpleNamespace(id="pct", unit=PercentType(), not_asked=False, local_epsilon=None,
                        mechanism="none", central_epsilon=1.0, min=0, max=100)
    encoding = question_encoding(q)
    assert (encoding.kind, encoding.max_measurement, encoding.sensitivity) == ("sum", 100, 100)
    assert question_index(q, 37) == 37
    plan = question_noise_plan(q)
    assert (plan.kind, plan.sensitivity) == ("sum", 100)
    estimate = estimate_two_server(q, Entry([4_000], 100, plan))
    assert estimate.mean is not None and estimate.mean.estimate == 40.0
    assert estimate.categories is None
