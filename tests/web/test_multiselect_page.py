"""Check-all-that-apply questions on the page, in real Chromium against real servers: native
checkboxes in a fieldset answered from the keyboard on a phone-sized window, max_selected
enforced with a message the screen reader hears, the review's words equal to `respond`'s, a
valid report stored by the LDP server, and a two-server upload counted by a real leader and
helper."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ldpsurvey.client.multiselect_words import chances
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey
from test_page import READY, SENT

OPTIONS = ["cannabis", "cocaine", "ecstasy", "opioids", "sedatives"]


def survey(deployment: Any, mechanism: str = "psfo_grr", **changes: Any) -> dict[str, Any]:
    data = {"id": f"checks-{next(deployment.ids)}", "title": "Checks", "version": 1,
            "questions": [
                {"id": "smoker", "text": "Do you smoke?", "type": "binary", "epsilon": 1.0},
                {"id": "used", "type": "multiselect", "epsilon": 2.0, "mechanism": mechanism,
                 "text": "Which of these have you used? (check all that apply)",
                 "options": OPTIONS, "max_selected": 2, **changes}]}
    deployment.server.publish(data, deployment.key, deployment.token)
    return data


def test_keyboard_only_on_a_phone_with_the_limit_announced(deployment, page):
    page.set_viewport_size({"width": 360, "height": 740})
    data = survey(deployment)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    fieldset = page.locator("#q1-fieldset")
    assert "Which of these have you used?" in fieldset.locator("legend").inner_text()
    assert fieldset.locator("input[type=checkbox]").count() == 5
    assert "Check all that apply, at most 2." in fieldset.inner_text()
    keys = page.keyboard
    page.locator("#q0-0").focus()  # question 1: "Yes"
    keys.press("Space")
    keys.press("Tab")              # question 2: the first checkbox (cannabis)
    keys.press("Space")
    keys.press("Tab")              # cocaine: left unchecked
    keys.press("Tab")              # ecstasy
    keys.press("Space")
    keys.press("Tab")              # opioids: a third one is refused, and said so
    keys.press("Space")
    assert page.evaluate("document.activeElement.value") == "opioids"
    assert not page.locator("#q1-3").is_checked()
    limit = page.locator("#q1-limit")
    assert limit.get_attribute("aria-live") == "polite"
    assert limit.inner_text() == "You can check at most 2 of these options: uncheck one first."
    keys.press("Shift+Tab")        # back to ecstasy: unchecking it makes room
    keys.press("Space")
    keys.press("Tab")
    keys.press("Space")            # opioids now
    assert limit.inner_text() == ""
    assert [page.locator(f"#q1-{i}").is_checked() for i in range(5)] == \
        [True, False, False, True, False]
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.get_by_role("button", name="Review what will be sent").focus()
    keys.press("Enter")
    page.wait_for_selector("#review")
    review = page.locator("#review").inner_text()
    assert "cannabis, opioids" in review
    mechanism = mechanism_for(Survey.from_dict(data).question("used"))
    said = chances(Survey.from_dict(data).question("used"), mechanism, ["cannabis", "opioids"])
    assert said in review  # the CLI's sentence, character for character
    keys.press("Tab")
    assert page.evaluate("document.activeElement.id") == "send"
    keys.press("Enter")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(data["id"])
    assert isinstance(stored["answers"]["used"], int) and 0 <= stored["answers"]["used"] < 7
    assert page.problems == []


def test_every_checkbox_has_its_label(deployment, page):
    data = survey(deployment, "option_rr")
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    for option in OPTIONS:
        box = page.get_by_label(option, exact=True)
        assert box.get_attribute("type") == "checkbox"
    described = page.locator("#q1-0").get_attribute("aria-describedby").split()
    assert {"q1-hint", "q1-error", "q1-limit"} <= set(described)


@pytest.mark.parametrize("mechanism", ["option_rr", "set_ue", "psfo_olh"])
def test_each_mechanism_sends_a_report_the_server_takes(deployment, page, mechanism):
    data = survey(deployment, mechanism)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("No").check()
    page.get_by_label("ecstasy", exact=True).check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "Your answer (stays on this device)" in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    shown = json.loads(page.locator("pre.wire").text_content())
    (stored,) = deployment.stored(data["id"])
    assert stored["answers"] == shown["answers"]
    assert page.problems == []


def test_nothing_checked_is_an_answer_unless_one_is_required(deployment, page):
    data = survey(deployment)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "None of the options" in page.locator("#review").inner_text()
    strict = survey(deployment, required_min=1)
    page.goto(deployment.page_url(strict["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_role("button", name="Review what will be sent").click()
    error = page.locator("#q1-error")
    assert error.inner_text() == "Please check at least one option."
    assert page.evaluate("document.activeElement.id") == "q1-0"
    assert page.locator("#review").count() == 0


def test_an_optional_question_is_skipped_with_its_own_checkbox(deployment, page):
    data = survey(deployment, optional=True)
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("Yes").check()
    page.get_by_label("cocaine", exact=True).check()
    page.get_by_label("Skip this question").check()  # clears the options it would contradict
    assert not page.get_by_label("cocaine", exact=True).is_checked()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(data["id"])
    assert set(stored["answers"]) == {"smoker"}


# --- two servers: the page's upload counted by a real leader and helper ------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory, browser):
    from support.two_server import start_pair

    started = start_pair(tmp_path_factory.mktemp("pair"))
    yield started
    started.stop()


@pytest.mark.parametrize("local", [None, "psfo_grr", "option_rr"])
def test_a_two_server_multiselect_upload_is_counted(pair, page, tmp_path, local):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from ldpsurvey.client.respondent import Respondent
    from support.clients import http_json
    from support.two_server import signed_survey, two_server_survey

    sid = f"checks-2s-{local or 'central'}".replace("_", "-")
    data = two_server_survey(pair.helper.url, pair.helper_key, pair.leader_key, survey_id=sid,
                             min_batch=3)
    question = {"id": "used", "type": "multiselect", "text": "Which have you used?",
                "options": OPTIONS, "max_selected": 2, "central_epsilon": 1.0}
    if local:
        question.update(local_epsilon=2.0, mechanism=local)
    data["questions"] = [question]
    data.pop("crosstabs", None)
    http_json("POST", pair.leader.url + "/api/surveys",
              signed_survey(data, Ed25519PrivateKey.generate()), pair.token)
    for i, chosen in enumerate((["cannabis"], [], ["cocaine", "opioids"])):
        r = Respondent(pair.leader.url, state_dir=str(tmp_path / f"s{i}"), warn=lambda m: None,
                       max_epsilon=1e4)
        assert r.submit(r.answer(r.fetch_survey(sid), {"used": chosen})).status == "sent"
    page.goto(f"{pair.leader.url}/s/{sid}")
    page.wait_for_selector(READY)
    page.get_by_label("sedatives", exact=True).check()
    page.get_by_label("cannabis", exact=True).check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "cannabis, sedatives" in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    api = lambda method, path: http_json(method, pair.leader.url + path,  # noqa: E731
                                         {} if method == "POST" else None, pair.token)
    api("POST", f"/api/surveys/{sid}/two-server/aggregate")
    [batch] = api("GET", f"/api/surveys/{sid}/two-server/batches")["batches"]
    collected = api("POST", f"/api/surveys/{sid}/two-server/batches/{batch['batch_id']}/collect")
    entry = collected["entries"]["used"]
    assert entry["n"] == 4 and entry["rejected"] == 0  # the page's upload passed the proofs
    [q] = collected["estimates"]["questions"]
    assert [c["value"] for c in q["categories"]] == OPTIONS
    assert page.problems == []


def test_the_pages_words_are_respond_s_for_every_mechanism(js_page, web_root_url):
    """describe(), the chances for an answer and a report's words: the same strings as
    client/multiselect_words.py for each mechanism, sizes of sets and shapes."""
    from ldpsurvey.client.multiselect_words import describe, report_words
    from support.sources import SeededSource

    cases, expected = [], []
    for name, m, least, alone in (("option_rr", 3, 0, []), ("set_ue", 2, 1, []),
                                  ("psfo_grr", 1, 0, []), ("psfo_grr", 5, 1, []),
                                  ("psfo_olh", 3, 0, []), ("psfo_grr", 5, 0, ["sedatives"]),
                                  ("psfo_olh", 5, 1, ["sedatives"])):
        data = {"id": "w", "title": "w", "version": 1, "questions": [
            {"id": "q", "text": "q", "type": "multiselect", "mechanism": name, "epsilon": 1.5,
             "options": OPTIONS, "max_selected": m, "required_min": least,
             **({"exclusive": alone} if alone else {})}]}
        q = Survey.from_dict(data).questions[0]
        mech = mechanism_for(q)
        for answer in ([], OPTIONS[:1], OPTIONS[:min(m, 5 - len(alone))]):
            if len(answer) < least:
                continue
            report = json.loads(json.dumps(mech.perturb(answer, SeededSource(len(cases)))))
            cases.append([q.to_dict(), answer, report])
            expected.append([describe(q, mech), chances(q, mech, answer),
                             report_words(q, mech, report)])
    got = js_page.evaluate("""async ([root, cases]) => {
      const M = await import(root + "js/mechanisms.js");
      return cases.map(([q, answer, report]) => {
        const mech = M.mechanismFor(q);
        return [mech.describe().text, mech.describe(answer).text, mech.explainReport(report)];
      });
    }""", [web_root_url, cases])
    assert got == expected


NONE = "none of these"


def test_an_exclusive_option_clears_the_others_and_is_cleared_by_them(deployment, page):
    """As ODK does: ticking "None of these" unchecks the options checked, ticking an option
    unchecks "None of these", each said in the polite live region; "None" alone is sent."""
    data = survey(deployment, options=[*OPTIONS, NONE], max_selected=6, exclusive=[NONE])
    page.goto(deployment.page_url(data["id"]))
    page.wait_for_selector(READY)
    page.get_by_label("No", exact=True).check()
    page.get_by_label("cannabis", exact=True).check()
    page.get_by_label("cocaine", exact=True).check()
    page.get_by_label(NONE, exact=True).check()
    checked = [page.locator(f"#q1-{i}").is_checked() for i in range(6)]
    assert checked == [False] * 5 + [True]
    limit = page.locator("#q1-limit")
    assert limit.inner_text() == '"none of these" can only be checked alone.'
    page.get_by_label("ecstasy", exact=True).check()
    assert [page.locator(f"#q1-{i}").is_checked() for i in range(6)] == \
        [False, False, True, False, False, False]
    assert limit.inner_text() == '"none of these" can only be checked alone.'
    page.get_by_label(NONE, exact=True).check()
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert NONE in page.locator("#review").inner_text()
    page.click("#send")
    page.wait_for_selector(SENT)
    (stored,) = deployment.stored(data["id"])
    mechanism = mechanism_for(Survey.from_dict(data).question("used"))
    mechanism.validate_report(stored["answers"]["used"])
    assert page.problems == []


def test_the_page_refuses_what_the_client_refuses(js_page, web_root_url):
    """An exclusive option with another: AnswerError on both sides; alone or without it: a
    report on both."""
    from ldpsurvey.shared.errors import AnswerError

    data = {"id": "w", "title": "w", "version": 1, "questions": [
        {"id": "q", "text": "q", "type": "multiselect", "mechanism": "option_rr",
         "epsilon": 1.5, "options": [*OPTIONS, NONE], "exclusive": [NONE]}]}
    q = Survey.from_dict(data).questions[0]
    mech = mechanism_for(q)
    answers = [[NONE], ["cannabis", NONE], [NONE, "opioids", "ecstasy"], OPTIONS]
    expected = []
    for answer in answers:
        try:
            mech.encode(answer)
            expected.append("ok")
        except AnswerError as exc:
            expected.append(str(exc).replace("'", '"'))
    assert expected[1].startswith('"none of these" can only be selected alone to "q"')
    got = js_page.evaluate("""async ([root, q, answers]) => {
      const M = await import(root + "js/mechanisms.js");
      const mech = M.mechanismFor(q);
      return answers.map((a) => {
        try { mech.perturb(a); return "ok"; }
        catch (e) { return e instanceof M.AnswerError ? e.message : `${e.name} ${e.message}`; }
      });
    }""", [web_root_url, q.to_dict(), answers])
    assert got == expected
