"""CI gives the same verdict on every run (issue 17): every Hypothesis test of the default run
draws the same examples each time; exploring variants are slow-marked and print their seed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
# Modules whose import pulls in optional parts (browsers, schema fuzzers) are checked where
# they run; these are plain.
MODULES = sorted(p for p in TESTS.rglob("test_*.py")
                 if "web" not in p.parts and p.name != "test_schemathesis.py")


def load(path: Path) -> ModuleType:
    # A test module may import a sibling (`from test_crosstab_statistics import ...`): its
    # folder must be importable whether or not pytest collected that folder in this run, or
    # this test's verdict would depend on which other files ran.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"determinism_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def test_the_default_profile_is_derandomized_and_reports_failures_fully() -> None:
    assert settings.get_current_profile_name() == "default"
    assert settings.default.derandomize is True
    assert settings.default.print_blob is True
    assert settings.default.deadline is None  # a per-example time limit fails under load
    slow = settings.get_profile("slow")
    assert slow.derandomize is False and slow.print_blob is True


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_default_run_hypothesis_test_is_derandomized(path: Path) -> None:
    module = load(path)
    for name in dir(module):
        test = getattr(module, name)
        if not (name.startswith("test") and getattr(test, "is_hypothesis_test", False)):
            continue
        marks = {m.name for m in getattr(test, "pytestmark", [])}
        used = test._hypothesis_internal_use_settings
        if "slow" in marks:
            assert not used.derandomize, f"{name}: the slow variant should explore"
        else:
            assert used.derandomize, f"{name} draws new examples on every default run"




def test_exploring_tests_use_a_fixed_seed_under_ci(monkeypatch) -> None:
    """Under CI=true even the slow exploring tests draw the same examples on every run."""
    from support.exploring_seed import CI_HYPOTHESIS_SEED, exploring_seed

    monkeypatch.setenv("CI", "true")
    assert exploring_seed() == exploring_seed() == CI_HYPOTHESIS_SEED
