"""Two-server collusion, per question (issue 32): for a question the device does not randomize
first, the page said only "only a noisy total over everyone is revealed" while `plan` said
"your answers to smoker are exposed". Now the hint under each question and its review line say,
in plain words and per question, that both organizations together could read this answer, or,
with a local ε0, how much more sure they could become of it; `respond` says the same words
(client/review.py), and `plan`'s guarantee names the same questions as readable."""

from __future__ import annotations

from typing import Any

import pytest
from ldpsurvey.client.review import question_privacy, reach_text, two_server_review_lines
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.guarantees import survey_guarantees
from ldpsurvey.shared.wording import odds_factor
from support.two_server import two_server_survey

READ = "could put the two halves back together and read this answer"


def mixed_survey() -> Survey:
    """smoker randomized on the device (ε0 = 2), mood and hours not."""
    data = two_server_survey("https://helper.example:8443", b"h" * 32, b"l" * 32)
    data["questions"][0].update(local_epsilon=2.0, mechanism="binary_rr")
    return Survey.from_dict(data)


def page_words(js_page: Any, web_root_url: str, survey: Survey,
               answers: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the hint under each question, each question's review line) as flow.js writes them."""
    return js_page.evaluate("""async ([root, questions, answers]) => {
        const F = await import(root + "js/twoserver/flow.js");
        const verified = { survey: { questions },
                           twoServer: { helperUrl: "https://helper.example:8443" } };
        const list = F.reviewList(verified, new Map(Object.entries(answers)),
                                  "http://127.0.0.1:8000");
        return [questions.map((q) => F.hint(q)),
                [...list.children].map((li) => li.querySelector(".how")?.textContent ?? "")];
    }""", [web_root_url, survey.to_dict()["questions"], answers])


def test_each_question_says_what_both_organizations_together_could_learn(
        js_page: Any, web_root_url: str) -> None:
    survey = mixed_survey()
    answers = {"smoker": True, "mood": "mid", "hours": 7}
    hints, hows = page_words(js_page, web_root_url, survey, answers)
    lines = two_server_review_lines(survey, answers, "http://127.0.0.1:8000")
    for i, (q, hint, how) in enumerate(zip(survey.questions, hints, hows, strict=True)):
        assert hint.startswith(question_privacy(q))  # the CLI's words, then "Optional: ..."
        assert lines[3 + 3 * i] == f"   {how}"  # after "i. text" and "Your answer: ..."
        if q.local_epsilon is None:
            assert f"But both organizations together {READ}." in hint, q.id
            assert f"127.0.0.1:8000 and helper.example:8443 together {READ}." in how, q.id
        else:
            assert READ not in hint and READ not in how
            sure = f"at most {odds_factor(q.local_epsilon)} times more sure of"
            reach = f"for example from 50% to {reach_text(q.local_epsilon)}"
            assert f"Even both organizations together could be {sure} this answer, {reach}." \
                in hint
            assert sure in how and reach in how
    assert [READ in h for h in hints] == [False, True, True]


@pytest.mark.parametrize("local", [False, True])
def test_plan_names_the_same_questions_as_readable(local: bool) -> None:
    data = two_server_survey("https://helper.example", b"h" * 32, b"l" * 32, local=local)
    survey = Survey.from_dict(data)
    statement = " ".join(survey_guarantees(survey).statements)
    readable = [q.id for q in survey.questions if q.local_epsilon is None]
    assert readable == (["hours"] if local else ["smoker", "mood", "hours"])
    if local:
        assert "your answers to hours are exposed: the two together could read them" in statement
    else:
        assert "could put the halves back together and read every answer" in statement
    on_cli = [question_privacy(q) for q in survey.questions]
    assert [READ in text for text in on_cli] == [q.id in readable for q in survey.questions]

