"""Any survey definition gets a result or a clean error, everywhere (issue 11).

Hypothesis generates survey definitions across the whole schema and past its edges: every
question type, k from 1 to past each mechanism's declared limit, ε from 1e-300 to past the
maximum, integer ranges out to and beyond what JSON carries exactly, explicit, `auto` and
unknown mechanisms, params, groups, instantaneous layers and report size limits. Each one goes
through the survey parser, `ldpsurvey plan`, `ldpsurvey simulate --n 50` (the real commands,
via click's CliRunner) and `POST /api/surveys` with a signed manifest (then, when published,
`GET .../estimates`). The outcome must be a
result or a typed error (CLI: exit 1 with one `Error:` line; HTTP: a JSON error with a 4xx
status), never an uncaught exception or a 5xx, and each step must finish within `TIME_BOUND`.

The default run is short (`max_examples` below); `-m slow` runs the long variant.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.app import create_app
from ldpsurvey.server.auth import create_token
from ldpsurvey.server.store import open_store
from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.manifest import public_key_b64, sign_survey
from ldpsurvey.shared.mechanisms import MECHANISMS
from ldpsurvey.shared.mechanisms.base import MAX_EPSILON, MAX_OPTIONS, MIN_EPSILON
from ldpsurvey.shared.mechanisms.geometric import MAX_ABS_REPORT
from ldpsurvey.shared.mechanisms.ordinal_exp import OrdinalExp
from ldpsurvey.shared.survey import Survey, canonical_json
from support.timeouts import TEST_TIMEOUT

# Seconds any one step may take on a loaded CI machine: a bound on the work a definition can
# cause, far above what a step needs (well under a second, bench numbers in the commit).
TIME_BOUND = TEST_TIMEOUT  # a hang, not a speed target (bench/ measures speed)
KEY = Ed25519PrivateKey.generate()
_ids = itertools.count()

# --- strategies --------------------------------------------------------------------------------

EDGE_KS = sorted({1, 2, 3, 63, 64, 65, OrdinalExp.max_options, OrdinalExp.max_options + 1,
                  MAX_OPTIONS, MAX_OPTIONS + 1})
TYPES = ("binary", "categorical", "ordinal", "integer")
# Mostly definitions the schema accepts (so plan, simulate and publish run on them), with a
# steady share past every edge.
option_counts = st.one_of(st.integers(2, 40), st.integers(2, 40), st.sampled_from(EDGE_KS))
valid_epsilons = st.one_of(
    st.floats(min_value=MIN_EPSILON, max_value=MAX_EPSILON),
    st.floats(min_value=0.05, max_value=8.0),
    st.sampled_from([MIN_EPSILON, 1e-3, 1.0, MAX_EPSILON]),
)
edge_epsilons = st.one_of(
    st.floats(min_value=1e-300, max_value=MAX_EPSILON * 1.2, allow_nan=False),
    st.sampled_from([1e-300, 5e-324, MIN_EPSILON / 2, MAX_EPSILON * (1 + 1e-15), 1e308, 0,
                     -1.0]),
    st.integers(-2, 10**400),
)
bounds = st.one_of(st.integers(-300, 300), st.integers(-300, 300), st.integers(-(2**60), 2**60),
                   st.sampled_from([-MAX_ABS_REPORT, MAX_ABS_REPORT, -(2**50), 2**50,
                                    -(2**63), 2**63, 10**30]))
spans = st.one_of(st.integers(1, 300), st.integers(1, 300), st.integers(-1, 2**61),
                  st.sampled_from([255, 256, 257, 2**20, 2**50, 2**53]))


def often(valid: st.SearchStrategy[Any], edge: st.SearchStrategy[Any],
          share: int = 4) -> st.SearchStrategy[Any]:
    """`valid` (share-1) times in `share`, `edge` the rest."""
    return st.integers(0, share - 1).flatmap(lambda i: edge if i == 0 else valid)


epsilons = often(valid_epsilons, edge_epsilons)


def fitting(qtype: str) -> list[str]:
    return sorted(name for name, cls in MECHANISMS.items() if qtype in cls.question_types)


@st.composite
def questions(draw: st.DrawFn, index: int) -> dict[str, Any]:
    qtype = draw(often(st.sampled_from(TYPES), st.sampled_from([*TYPES, "ranking", 3]), 12))
    q: dict[str, Any] = {"id": f"q{index}", "text": "A question?", "type": qtype,
                         "epsilon": draw(epsilons)}
    names = fitting(qtype) if isinstance(qtype, str) and qtype in TYPES else []
    mechanism = draw(often(st.sampled_from(["auto", *names]) if names else st.just("auto"),
                           st.sampled_from([*sorted(MECHANISMS), "send_plaintext"]), 5))
    if mechanism != "auto" or draw(st.booleans()):
        q["mechanism"] = mechanism
    if qtype in ("categorical", "ordinal"):
        k = draw(option_counts)
        q["options"] = [f"o{i}" for i in range(k)]
        if k >= 2 and draw(st.booleans()):
            q["groups"] = {"first": q["options"][: max(1, k // 2)]}
    elif qtype == "integer":
        low = draw(bounds)
        q["min"], q["max"] = low, low + draw(spans)
    if draw(st.integers(0, 9)) == 0:
        q["params"] = draw(st.one_of(st.just({}), st.dictionaries(
            st.sampled_from(["p", "q", "base"]), st.sampled_from(["1/2", 3, None]))))
    if draw(st.integers(0, 5)) == 0:
        q["instantaneous_epsilon"] = draw(epsilons)
    if draw(st.booleans()):
        q["optional"] = True
    return q


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    survey: dict[str, Any] = {"id": f"fuzz-{next(_ids)}", "title": "Fuzzed", "version": 1,
                              "questions": [draw(questions(i)) for i in range(count)]}
    if draw(st.integers(0, 3)) == 0:
        survey["series"] = "weekly"
    if draw(st.integers(0, 4)) == 0:
        survey["report_size_limit"] = draw(often(st.sampled_from([16, 100, 1024, 1 << 20]),
                                                 st.sampled_from([15, (1 << 20) + 1, -1])))
    return survey


# --- the checks ----------------------------------------------------------------------------------


def timed(step: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    assert elapsed < TIME_BOUND, f"{step} took {elapsed:.1f} s"
    return result


def parse(definition: dict[str, Any]) -> Survey | None:
    try:
        return Survey.from_dict(definition)
    except LdpSurveyError:
        return None


def run_cli(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    if result.exit_code != 0:
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (
            f"{args[0]}: uncaught {result.exception!r}\n{result.output}")
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert lines and lines[-1].startswith("Error: "), result.output


def publish(client: FlaskClient, headers: dict[str, str], definition: dict[str, Any],
            survey: Survey | None) -> int:
    if survey is not None:
        body = sign_survey(survey, KEY).to_dict()
    else:  # sign the raw bytes, so the server gets past the signature to the survey
        try:
            raw = canonical_json(definition)
        except (ValueError, TypeError):
            raw = json.dumps(definition).encode()
        body = {"survey": definition, "signature": base64.b64encode(KEY.sign(raw)).decode(),
                "public_key": public_key_b64(KEY.public_key())}
    response = client.post("/api/surveys", json=body, headers=headers)
    assert response.status_code < 500, response.get_data(as_text=True)[:500]
    if response.status_code >= 400:
        assert response.is_json and "error" in response.get_json(), response.get_data()
    elif survey is not None:
        assert response.get_json()["sha256"] == survey.sha256
        # Estimates of the (empty) survey: every question's estimator runs on the server.
        estimates = client.get(f"/api/surveys/{survey.id}/estimates", headers=headers)
        assert estimates.status_code == 200, estimates.get_data(as_text=True)[:500]
    return response.status_code


def check_definition(definition: dict[str, Any], target: list[str], workdir: Path,
                     client: FlaskClient, headers: dict[str, str]) -> None:
    survey = timed("parse", lambda: parse(definition))
    path = workdir / f"{definition['id']}.json"
    path.write_text(json.dumps(definition))
    timed("plan", lambda: run_cli(["plan", str(path), *target]))
    timed("simulate", lambda: run_cli(["simulate", str(path), "--n", "50", "--seed", "1"]))
    status = timed("publish", lambda: publish(client, headers, definition, survey))
    if survey is not None:
        assert status in (200, 201)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> tuple[FlaskClient, dict[str, str], Path]:
    workdir = tmp_path_factory.mktemp("fuzz")
    db_path = workdir / "server.db"
    app = create_app({"DATABASE": str(db_path), "MAX_CONTENT_LENGTH": 16 << 20,
                      "TESTING": True})
    db = open_store(db_path)
    try:
        token = create_token(db, "fuzz")[1]
    finally:
        db.close()
    return app.test_client(), {"Authorization": f"Bearer {token}"}, workdir


# What `plan` is asked for: a margin of error (down to where n overflows) or a number of
# respondents.
targets = st.one_of(
    st.one_of(st.floats(min_value=1e-300, max_value=10.0),
              st.sampled_from([1e-300, 1e-160, 1e-5, 0.02])).map(lambda m: ["--margin", repr(m)]),
    st.integers(1, 10**30).map(lambda n: ["--n", str(n)]),
)

_HEALTH = {"suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


# Derandomized (the default profile, tests/conftest.py): the same 60 definitions every run.
@settings(max_examples=60, **_HEALTH)
@given(definitions(), targets)
def test_any_definition_gets_a_result_or_a_clean_error(
        server: tuple[FlaskClient, dict[str, str], Path], definition: dict[str, Any],
        target: list[str]) -> None:
    client, headers, workdir = server
    check_definition(definition, target, workdir, client, headers)


# Exploring: fresh definitions from the run's printed seed.
@pytest.mark.slow
@settings(settings.get_profile("slow"), max_examples=1500, **_HEALTH)
@given(definitions(), targets)
def test_any_definition_gets_a_result_or_a_clean_error_long(
        server: tuple[FlaskClient, dict[str, str], Path], definition: dict[str, Any],
        target: list[str]) -> None:
    client, headers, workdir = server
    check_definition(definition, target, workdir, client, headers)
