"""The two-server declaration: parsing, canonical bytes, signing, refusals (SurveyError)."""

from __future__ import annotations

import copy
import os

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client.errors import TrustError
from ldpsurvey.client.state import StateDir
from ldpsurvey.client.trust import TrustStore
from ldpsurvey.shared.errors import ManifestError, SurveyError
from ldpsurvey.shared.manifest import sign_survey, verify_manifest
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.config import b64url
from support.two_server import two_server_survey

HELPER, LEADER = os.urandom(32), os.urandom(32)


def data(**changes):
    d = two_server_survey("https://helper.example", HELPER, LEADER)
    d.update(changes)
    return d


def test_parses_and_round_trips_through_canonical_bytes():
    survey = Survey.from_dict(data())
    assert survey.collection == "two-server"
    assert survey.two_server.helper_hpke_key == HELPER
    assert survey.two_server.leader_hpke_key == LEADER
    assert survey.two_server.min_batch_size == 5
    smoker = survey.question("smoker")
    assert (smoker.central_epsilon, smoker.local_epsilon, smoker.mechanism) == (1.0, None, "none")
    assert smoker.epsilon == 1.0
    again = Survey.from_dict(survey.to_dict())
    assert again.canonical_bytes() == survey.canonical_bytes()


def test_local_epsilon_builds_the_local_mechanism_at_eps0():
    survey = Survey.from_dict(two_server_survey("https://h.example", HELPER, LEADER, local=True))
    mood = survey.question("mood")
    assert mood.local_epsilon == 2.0 and mood.epsilon == 2.0
    assert mood.mechanism in ("grr", "binary_rr", "ordinal_exp")
    assert Survey.from_dict(survey.to_dict()) == survey


def test_ldp_surveys_keep_their_canonical_bytes():
    d = data()
    for key in ("collection", "two_server"):
        d.pop(key)
    for q in d["questions"]:
        q["epsilon"] = q.pop("central_epsilon")
    d.pop("crosstabs")
    assert "collection" not in Survey.from_dict(d).to_dict()


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d.pop("two_server"), "two_server"),
    (lambda d: d.update(collection="three-server"), "collection"),
    (lambda d: d["two_server"].update(helper_hpke_key="abc"), "two_server.helper_hpke_key"),
    (lambda d: d["two_server"].update(leader_hpke_key=b64url(HELPER)),
     "two_server.helper_hpke_key"),
    (lambda d: d["two_server"].update(min_batch_size=1), "two_server.min_batch_size"),
    (lambda d: d["two_server"].update(helper_url="ftp://x"), "two_server.helper_url"),
    (lambda d: d["two_server"].update(delta=2), "two_server.delta"),
    (lambda d: d["two_server"].update(extra=1), "two_server.extra"),
    (lambda d: d["questions"][0].pop("central_epsilon"), "questions.smoker.central_epsilon"),
    (lambda d: d["questions"][0].update(mechanism="grr"), "questions.smoker.mechanism"),
    (lambda d: d["questions"][1].update(local_epsilon=1.0, mechanism="olh"),
     "questions.mood.mechanism"),
    (lambda d: d.update(series="weekly"), "series"),
    (lambda d: d.update(crosstabs=[["smoker", "hours"]]), "crosstabs[0]"),
])
def test_refusals_name_the_field(change, field):
    d = copy.deepcopy(data())
    change(d)
    with pytest.raises(SurveyError) as exc:
        Survey.from_dict(d)
    assert exc.value.field == field


def test_central_epsilon_is_refused_in_the_ldp_mode():
    d = data()
    d.pop("collection")
    d.pop("two_server")
    with pytest.raises(SurveyError, match="two-server"):
        Survey.from_dict(d)


def test_a_changed_helper_key_breaks_the_signature():
    key = Ed25519PrivateKey.generate()
    body = sign_survey(Survey.from_dict(data()), key).to_dict()
    verify_manifest(body)
    body["survey"]["two_server"]["helper_hpke_key"] = b64url(os.urandom(32))
    with pytest.raises(ManifestError, match="signature does not verify"):
        verify_manifest(body)


def test_the_client_refuses_a_malformed_two_server_manifest(tmp_path):
    """Signed, but the mode is malformed: refused like a bad mechanism, before anything."""
    key = Ed25519PrivateKey.generate()
    survey = Survey.from_dict(data())
    raw = survey.to_dict()
    raw["two_server"]["helper_hpke_key"] = "not-a-key"
    import base64

    from ldpsurvey.shared.survey import canonical_json
    body = {"survey": raw, "public_key": sign_survey(survey, key).public_key,
            "signature": base64.b64encode(key.sign(canonical_json(raw))).decode()}
    store = TrustStore(StateDir(str(tmp_path)), warn=lambda m: None)
    with pytest.raises(TrustError, match="helper_hpke_key"):
        store.check(body, server_url="http://127.0.0.1:1", survey_id="pulse")


def test_the_respondent_policy_counts_the_central_epsilon_too():
    from ldpsurvey.client.errors import PolicyError
    from ldpsurvey.client.trust import check_policy

    d = two_server_survey("https://h.example", HELPER, LEADER, local=True)
    d["questions"][0]["central_epsilon"] = 6.0  # ε0 = 2 locally, but 6 against one server
    with pytest.raises(PolicyError, match="costs ε = 6"):
        check_policy(Survey.from_dict(d), 5.0)


def test_a_two_server_crosstab_refuses_a_decimal_in_one_line():
    """An LDP crosstab gives a decimal's mean per category; a two-server one joins two
    measured values in one Histogram, which a number's Sum is not: refused naming it."""
    d = copy.deepcopy(data())
    d["questions"].append({"id": "income", "type": "decimal", "text": "Income?", "min": 0,
                           "max": 100, "resolution": 1, "central_epsilon": 1.0})
    Survey.from_dict(d)  # the question itself is fine in a two-server survey
    d["crosstabs"] = [["smoker", "income"]]
    with pytest.raises(SurveyError) as exc:
        Survey.from_dict(d)
    assert exc.value.field == "crosstabs[0]"
    assert "'income' is decimal" in exc.value.message and "\n" not in exc.value.message
    # and why: not a missing type in a list, a missing proof (main named the joinable types)
    assert ("its mean per category) is not built: no Prio3 circuit here proves each "
            "category's sum") in exc.value.message
    assert "docs/two-server.md" in exc.value.message
