"""The page speaks to a respondent, not to a cryptographer (issue 17): privacy in odds words
with ε and the key's fingerprint behind a details control, a review without raw codes, an
integer report outside the range called expected noise, and after sending the plain-words
version with a local time (the raw JSON and receipt id in details)."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from ldpsurvey.client.review import odds_sentence, question_privacy, reach_text
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.wording import epsilon_text, odds_factor, percent_sure
from vectors import build_vectors

READY = "body[data-state=ready]"
SENT = "body[data-delivery=sent]"


def test_the_first_screen_states_privacy_in_odds_words(deployment, page):
    sid = deployment.new_survey()["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    privacy = page.locator("#privacy").inner_text()
    # survey_dict() spends ε = 1 + 1.5 + 1 = 3.5; e^3.5 = 33.1, rounded up
    assert ("at most 34 times more sure of your real answers than before, for example from "
            "50% to at most 98% sure, even if you answer every question") in privacy
    assert "ε" not in privacy
    assert not page.locator("#fingerprint").is_visible()  # behind "Details"
    visible = page.locator("#content").inner_text()
    assert not re.search(r"[0-9a-f]{64}", visible)
    page.get_by_text("Details: privacy budget and signing key").click()
    assert page.locator("#fingerprint").is_visible()
    details = page.locator("#survey-details").inner_text()
    assert "ε = 3.5" in details and deployment.fingerprint in details
    hint = page.locator("#q0-hint").inner_text()
    # e^1 = 2.72; from 50/50: e/(1 + e) = 73.1%, rounded up
    assert ("at most 2.8 times more sure of this answer than before, for example from 50% to at "
            "most 74% sure (ε = 1)") in hint


def test_review_and_receipt_are_plain_words_with_a_local_time(deployment, browser):
    sid = deployment.new_survey()["id"]
    ctx = browser.new_context(timezone_id="Pacific/Auckland", locale="en-NZ")
    try:
        page = ctx.new_page()
        page.goto(deployment.page_url(sid))
        page.wait_for_selector(READY)
        page.get_by_label("No", exact=True).check()
        page.get_by_label("fine").check()
        page.get_by_label("A whole number from 0 to 30").fill("4")
        page.get_by_role("button", name="Review what will be sent").click()
        page.wait_for_selector("#review")
        review = page.locator("#review").inner_text()
        assert page.locator("#review code, #review pre").count() == 0  # no raw codes
        assert not re.search(r"\b(true|false)\b(?! answers)", review)  # no JSON values
        assert "3 or 5 with probability" in review and "below 0 or above 30" in review
        assert "less likely than the one before" in review
        assert "is the less likely the larger it is" not in page.content()
        page.click("#send")
        page.wait_for_selector(SENT)
        receipt = page.locator("#receipt")
        text = receipt.inner_text()
        assert "Your device sent" in text and "Do you smoke?" in text
        assert not page.locator("pre.wire").is_visible()  # the JSON is in the details
        created = page.evaluate("""async (sid) => {
            const store = await import("./js/store.js");
            return (await store.answered(sid, 1)).time;
        }""", sid)
        local = page.evaluate("(iso) => new Date(iso).toLocaleString()", created)
        assert local in text and created not in text  # local time shown, not raw UTC
    finally:
        ctx.close()


def test_an_integer_report_outside_the_range_is_called_expected_noise(js_page: Any,
                                                                      web_root_url: str):
    texts = js_page.evaluate("""async (root) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        const q = { id: "drinks", text: "Drinks?", type: "integer", epsilon: 1.0, min: 0,
                    max: 30, optional: false, mechanism: "geometric",
                    params: { epsilon_rational: "1", sensitivity: 30, histogram_low: -277,
                              histogram_high: 307 } };
        const mechanisms = new Map([["drinks", M.mechanismFor(q)]]);
        const survey = { questions: [q] };
        return [-27, 7, 31].map((r) =>
            R.sentList(survey, { drinks: r }, mechanisms).textContent);
    }""", web_root_url)
    below, inside, above = texts
    assert "the number -27 (outside 0 to 30: that is the random noise, as expected" in below
    assert "outside" not in inside
    assert "the number 31 (outside 0 to 30" in above


def test_odds_words_match_the_cli_and_round_up(js_page: Any, web_root_url: str):
    """The odds factor, the 50/50 anchor and the rounded ε: the same strings on the page and
    in `respond` (client/review.py, whose own tests pin their values), all rounded up."""
    epsilons = [i / 20 for i in range(0, 301)] + [i / 137 for i in range(1, 700)] + [
        3.13585, 1.94591, 4.4998095, 9.996, 0.001, 1e-6, 12.345, 13.2, 16.5, 20]
    js = js_page.evaluate("""async ([root, epsilons]) => {
        const O = await import(root + "js/odds.js");
        return epsilons.map((e) => [O.oddsFactor(e), O.percentSure(e), O.epsilonText(e),
                                    O.reachText(e)]);
    }""", [web_root_url, epsilons])
    assert js == [[odds_factor(e), percent_sure(e), epsilon_text(e), reach_text(e)]
                  for e in epsilons]
    for epsilon, (factor, _, shown, _) in zip(epsilons, js, strict=True):
        assert float(factor.replace(",", "")) >= math.exp(epsilon)
        assert float(shown) >= epsilon


def test_epsilon_is_rounded_and_delta_kept_out_of_the_respondents_view(deployment, page):
    """Issue 32: ε = 1.04528 + 1.09057 + 1 = 3.13585 was shown with six digits, and the review's
    details showed the advanced composition bound at δ = 1e-6. Every ε on the page now has
    three significant digits (rounded up), and neither δ nor the advanced bound is shown."""
    sid = deployment.new_survey(smoker={"epsilon": 1.04528}, mood={"epsilon": 1.09057})["id"]
    page.goto(deployment.page_url(sid))
    page.wait_for_selector(READY)
    page.get_by_text("Details: privacy budget and signing key").click()
    assert "answering every question spends ε = 3.14 of privacy" in \
        page.locator("#survey-details").inner_text()
    assert "(ε = 1.05)." in page.locator("#q0-hint").inner_text()
    assert "(ε = 1.1)." in page.locator("#q1-hint").inner_text()
    page.get_by_label("Yes").check()
    page.get_by_label("fine").check()
    page.get_by_label("A whole number from 0 to 30").fill("4")
    page.get_by_role("button", name="Review what will be sent").click()
    page.wait_for_selector("#review")
    assert "(ε = 3.14 in total; this page's limit is ε = 5)" in \
        page.locator("#review .total").inner_text()
    page.locator("details.composition summary").click()
    composition = page.locator("details.composition").inner_text()
    assert "With this survey: 3 reports, ε = 3.14 in total." in composition, composition
    text = page.locator("body").inner_text()
    assert not re.search(r"\d\.\d{4,}", text), re.findall(r"\S*\d\.\d{4,}\S*", text)
    for hidden in ("δ", "advanced", "1e-6", "1e-06"):
        assert hidden not in text, hidden


def test_odds_sentences_are_one_wording_on_the_page_and_the_cli(js_page: Any,
                                                               web_root_url: str):
    """The per-question and whole-survey sentences: the page and `respond` say the same."""
    epsilons = [0, 0.25, 1, 1.5, 3.5, 7]
    js = js_page.evaluate("""async ([root, epsilons]) => {
        const O = await import(root + "js/odds.js");
        return epsilons.map((e) => [O.questionPrivacy(e), O.oddsSentence(e)]);
    }""", [web_root_url, epsilons])
    for epsilon, (question, total) in zip(epsilons, js, strict=True):
        assert total == odds_sentence(epsilon)
        if epsilon:  # a question spends some ε
            q = Survey.from_dict({"id": "s", "title": "S", "version": 1, "questions": [
                {"id": "a", "text": "A?", "type": "binary", "epsilon": epsilon}]}).questions[0]
            assert question == question_privacy(q)


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    """One vector per (mechanism, type, layered or not, ε): a question, an answer, a report."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for case in build_vectors()["cases"]:
        q = case["question"]
        key = (q["mechanism"], q["type"], q.get("instantaneous_epsilon") is not None,
               q["epsilon"], len(q.get("options", ())))
        seen.setdefault(key, case)
    return list(seen.values())


def test_every_mechanism_gets_the_same_plain_words_on_the_page_and_the_cli(
        js_page: Any, web_root_url: str, cases: list[dict[str, Any]]) -> None:
    """Plain words for every mechanism, question type and layering of the shared vectors, and
    one wording: `respond` says what the page says, character for character."""
    from ldpsurvey.client.review import chances, report_words
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import Survey

    on_page = js_page.evaluate("""async ([root, cases]) => {
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        return cases.map((c) => {
            const q = c.question;
            const answer = q.type === "integer" ? Number(c.answer) : c.answer;
            const mechanisms = new Map([[q.id, M.mechanismFor(q)]]);
            return [R.chances(q, mechanisms.get(q.id), answer),
                    R.sentList({ questions: [q] }, { [q.id]: c.report }, mechanisms)
                      .querySelector(".sent").textContent];
        });
    }""", [web_root_url, cases])
    for case, (page_text, page_sent) in zip(cases, on_page, strict=True):
        for text in (page_text, page_sent):
            assert "NaN" not in text and "undefined" not in text and "[object" not in text
        q = case["question"]
        layered = q.get("instantaneous_epsilon") is not None
        survey = Survey.from_dict({"id": "d", "title": "d", "version": 1, "questions": [q],
                                   **({"series": "s"} if layered else {})})
        question = survey.questions[0]
        mechanism = mechanism_for(question)
        answer = int(case["answer"]) if q["type"] == "integer" else case["answer"]
        before = chances(question, mechanism, answer)
        assert before == page_text, (q["mechanism"], layered)
        assert before.startswith("Your ") and ("%" in before or "times less likely" in before)
        after = report_words(question, mechanism, case["report"])
        assert f"Your device sent: {after}" == page_sent, (q["mechanism"], layered)
        assert not after.startswith(("[", "{")), (q["mechanism"], after)


@pytest.mark.parametrize("lang", ["es", "fr"])
def test_respond_speaks_the_pages_spanish_and_french_character_for_character(
        js_page: Any, web_root_url: str, cases: list[dict[str, Any]], lang: str) -> None:
    """`respond --lang es|fr` fills in the page's own catalogue (client/page_words.py): its
    chances and report words are the page's in that language, numbers and plurals included,
    for every mechanism of the shared vectors (padded check-all-that-apply mechanisms, named
    designs, a location, a series' two layers among them: English marked [en] before)."""
    from ldpsurvey.client import review_words
    from ldpsurvey.client.page_words import Words
    from ldpsurvey.shared.mechanisms import mechanism_for
    from ldpsurvey.shared.survey import Survey

    on_page = js_page.evaluate("""async ([root, cases, lang]) => {
        const I = await import(root + "js/i18n.js");
        for (const part of ["core", "cores", "multiselect", "designs", "disclosed", "skip",
                            "location"]) {
          I.addWords(lang, (await import(root + `js/messages/${lang}/${part}.js`)).default);
          if (lang !== "en") I.addWords("en", (await import(
            root + `js/messages/en/${part}.js`)).default);
        }
        I.useWords(lang, lang);
        const M = await import(root + "js/mechanisms.js");
        const R = await import(root + "js/review.js");
        const out = cases.map((c) => {
            const q = c.question;
            const answer = q.type === "integer" ? Number(c.answer) : c.answer;
            const mechanisms = new Map([[q.id, M.mechanismFor(q)]]);
            return [R.chances(q, mechanisms.get(q.id), answer),
                    R.sentList({ questions: [q] }, { [q.id]: c.report }, mechanisms)
                      .querySelector(".sent").textContent];
        });
        I.useWords("en", "en");
        return out;
    }""", [web_root_url, cases, lang])
    words = Words(lang)
    compared = 0
    for case, (page_text, page_sent) in zip(cases, on_page, strict=True):
        q = case["question"]
        layered = q.get("instantaneous_epsilon") is not None
        survey = Survey.from_dict({"id": "d", "title": "d", "version": 1, "questions": [q],
                                   **({"series": "s"} if layered else {})})
        question = survey.questions[0]
        mechanism = mechanism_for(question)
        answer = int(case["answer"]) if q["type"] == "integer" else case["answer"]
        before = review_words.chances(question, mechanism, answer, None, words)
        after = review_words.report_words(question, mechanism, case["report"], None, words)
        assert before == page_text, (q["mechanism"], layered)
        outside = q["type"] == "integer" and not q.get("min", 0) <= case["report"] <= q.get(
            "max", 0)
        if not outside:
            assert words.t("review.sent", sent="yes", report=after) == page_sent, (
                q["mechanism"], layered)
            compared += 1
    assert compared >= len(cases) * 0.9  # every case's chances; its report unless outside


@pytest.mark.parametrize("local", [False, True])
def test_two_server_questions_get_the_same_words_on_the_page_and_the_cli(
        js_page: Any, web_root_url: str, local: bool) -> None:
    """A two-server survey (with and without a local ε0): the hint under each question and the
    review say on the CLI what client/web/js/twoserver/flow.js says on the page."""
    from ldpsurvey.client.review import two_server_review_lines
    from support.two_server import two_server_survey

    data = two_server_survey("https://helper.example:8443", b"h" * 32, b"l" * 32, local=local)
    survey = Survey.from_dict(data)
    questions = survey.to_dict()["questions"]
    answers = {"smoker": True, "mood": "mid", "hours": None}
    hints, items = js_page.evaluate("""async ([root, questions, answers]) => {
        const F = await import(root + "js/twoserver/flow.js");
        const verified = { survey: { questions },
                           twoServer: { helperUrl: "https://helper.example:8443" } };
        const list = F.reviewList(verified, new Map(Object.entries(answers)),
                                  "http://127.0.0.1:8000");
        return [questions.map((q) => F.hint(q)),
                [...list.children].map((li) => [...li.children].map((p) => p.textContent))];
    }""", [web_root_url, questions, answers])
    for q, hint in zip(survey.questions, hints, strict=True):
        optional = " Optional: skip it if you like (the organizations will see that you did)."
        assert hint == question_privacy(q) + (optional if q.optional else "")
        assert ("local ε0" in hint) == (q.local_epsilon is not None)
    lines = two_server_review_lines(survey, answers, "http://127.0.0.1:8000")
    assert lines[0].startswith("Before sending 'Pulse' (version 1): nothing has been split")
    expected: list[list[str]] = []
    for line in lines[1:]:
        if line.startswith("   "):
            expected[-1].append(line[3:])
        else:
            expected.append([line.split(". ", 1)[1]])
    assert items == expected
    assert "one for 127.0.0.1:8000 and one for helper.example:8443" in "\n".join(lines)
    if local:
        # e^2 = 7.39; from 50%: e²/(1 + e²) = 88.1%
        assert ("at most 7.4 times more sure of your answer, for example from 50% to at most "
                "89% sure (ε0 = 2)") in lines[3]


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("local", [False, True])
def test_two_server_review_in_spanish_and_french_is_the_pages(
        js_page: Any, web_root_url: str, local: bool, lang: str) -> None:
    """`respond --lang es|fr` on a two-server survey (English marked [en] before): each
    question's hint and the review's items are twoserver/flow.js's in that language."""
    from ldpsurvey.client import review_words
    from ldpsurvey.client.page_words import Words
    from support.two_server import two_server_survey

    data = two_server_survey("https://helper.example:8443", b"h" * 32, b"l" * 32, local=local)
    survey = Survey.from_dict(data)
    questions = survey.to_dict()["questions"]
    answers = {"smoker": True, "mood": "mid", "hours": None}
    hints, items = js_page.evaluate("""async ([root, questions, answers, lang]) => {
        const I = await import(root + "js/i18n.js");
        for (const part of ["core", "twoserver"]) {
          I.addWords(lang, (await import(root + `js/messages/${lang}/${part}.js`)).default);
          I.addWords("en", (await import(root + `js/messages/en/${part}.js`)).default);
        }
        I.useWords(lang, lang);
        const F = await import(root + "js/twoserver/flow.js");
        const verified = { survey: { questions },
                           twoServer: { helperUrl: "https://helper.example:8443" } };
        const list = F.reviewList(verified, new Map(Object.entries(answers)),
                                  "http://127.0.0.1:8000");
        const out = [questions.map((q) => F.hint(q)),
                     [...list.children].map((li) => [...li.children].map((p) => p.textContent))];
        I.useWords("en", "en");
        return out;
    }""", [web_root_url, questions, answers, lang])
    words = Words(lang)
    for q, hint in zip(survey.questions, hints, strict=True):
        optional = " " + words.t("two.optional") if q.optional else ""
        assert hint == review_words.question_privacy(q, words) + optional
    lines = review_words.two_server_review_lines(survey, answers, "http://127.0.0.1:8000",
                                                 words)
    assert lines[1] == words.t("two.reviewIntro")
    expected: list[list[str]] = []
    for line in lines[2:]:
        if line.startswith("   "):
            expected[-1].append(line[3:])
        else:
            expected.append([line.split(". ", 1)[1]])
    assert items == expected
    assert not any("[en]" in line for line in lines)


def test_a_two_server_receipt_counts_answers_and_combinations_apart(js_page: Any,
                                                                    web_root_url: str) -> None:
    """Issue 32: after three questions the receipt said "4 answers were included", the fourth
    being a declared crosstab: it says "3 answers and 1 combination", with plurals right."""
    from support.two_server import two_server_survey

    data = two_server_survey("https://helper.example:8443", b"h" * 32, b"l" * 32)
    survey = Survey.from_dict(data).to_dict()
    assert survey["crosstabs"], "the support survey declares a crosstab"
    text, sentences = js_page.evaluate("""async ([root, survey]) => {
        const F = await import(root + "js/twoserver/flow.js");
        const verified = { survey, twoServer: { helperUrl: "https://helper.example:8443" } };
        const shares = Object.fromEntries([...survey.questions.map((q) => q.id),
          ...survey.crosstabs.map((c) => `crosstab:${c.rows}:${c.cols}`)].map((k) => [k, ""]));
        const rec = { submission_id: "r", survey_id: survey.id, created: "2026-01-01T00:00:00Z",
                      body: { version: 1, public_shares: shares } };
        return [F.receipt(verified, rec, "http://127.0.0.1:8000").textContent,
                [[1, 0], [2, 0], [1, 1], [1, 2], [3, 1], [3, 2]].map(
                  ([a, c]) => F.includedSentence(a, c))];
    }""", [web_root_url, survey])
    assert "3 answers and 1 combination were included; a resend" in text, text
    assert sentences == ["1 answer was included", "2 answers were included",
                         "1 answer and 1 combination were included",
                         "1 answer and 2 combinations were included",
                         "3 answers and 1 combination were included",
                         "3 answers and 2 combinations were included"]
