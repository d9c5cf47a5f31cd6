"""Library errors pickle whole: the SQLite ingest process hands refusals (SurveyChanged,
SurveyClosed, InviteRefused, ...) back to the request threads, which must map them to the same
HTTP answer as in process. Exception's own pickling would rebuild them from their message alone
(details lost, and a constructor taking other arguments would fail)."""

from __future__ import annotations

import importlib
import pickle
import pkgutil

import ldpsurvey
import pytest
from ldpsurvey.shared.errors import LdpSurveyError


def _every_error_class() -> list[type[LdpSurveyError]]:
    for module in pkgutil.walk_packages(ldpsurvey.__path__, "ldpsurvey."):
        if ".web" not in module.name and "cli_docs" not in module.name:
            importlib.import_module(module.name)
    found, todo = [], [LdpSurveyError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


ERRORS = _every_error_class()


def test_the_walk_finds_the_server_errors() -> None:
    names = {cls.__name__ for cls in ERRORS}
    assert {"SurveyChanged", "SurveyClosed", "InviteRefused", "StoreUnavailable",
            "SurveyError"} <= names


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_an_error_survives_pickling(cls: type[LdpSurveyError]) -> None:
    error = cls.__new__(cls)
    LdpSurveyError.__init__(error, "what went wrong", {"field": "x", "n": [1, 2]})
    error.extra = "kept"  # a subclass's own attribute
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls
    assert (copy.message, copy.details, copy.extra) == (error.message, error.details, "kept")
    assert str(copy) == str(error) and copy.code == error.code
    assert getattr(copy, "status", None) == getattr(error, "status", None)
