"""How a crosstab reads a mechanism's reports is a typed property of the mechanism
(`JointReading`), which names no question type (issue 40): every mechanism declares a member,
and the report shapes that are numbers are the ones `bins` are meant for."""

from __future__ import annotations

import importlib
import pkgutil

import ldpsurvey.shared.mechanisms as mechanisms
from ldpsurvey.shared.joint_features import NUMBER_REPORTS
from ldpsurvey.shared.mechanisms.base import JointReading, Mechanism
from ldpsurvey.shared.mechanisms.disclosed import DisclosedInteger
from ldpsurvey.shared.mechanisms.geometric import Geometric
from ldpsurvey.shared.question_types import QUESTION_TYPES


def _every_mechanism_class() -> list[type[Mechanism]]:
    for module in pkgutil.walk_packages(mechanisms.__path__, mechanisms.__name__ + "."):
        importlib.import_module(module.name)
    found, todo = [], [Mechanism]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_every_mechanism_declares_a_joint_reading_that_names_no_type() -> None:
    classes = _every_mechanism_class()
    assert len(classes) > 30
    for cls in classes:
        assert isinstance(cls.joint_reports, JointReading), cls
    assert not {str(member) for member in JointReading} & set(QUESTION_TYPES)


def test_the_number_reports_are_a_whole_number_and_a_value() -> None:
    assert Geometric.joint_reports is DisclosedInteger.joint_reports is JointReading.WHOLE_NUMBER
    assert set(NUMBER_REPORTS) == {JointReading.WHOLE_NUMBER, JointReading.VALUE}
