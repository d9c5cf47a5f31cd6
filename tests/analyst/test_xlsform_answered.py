"""`${q} != ''` on an optional question and `${a} != ${b}` where both may be left unanswered
(the IMPACT MSNA's `${fsl_oxen_n_now}!=${fsl_oxen_n_ly}`): imported with answered() (docs/
xlsform.md, "Conditions"), keeping XPath's value on every answer set, the skipped answers
included. The form is tests/data/xlsform/optional_answers.md."""

from __future__ import annotations

import itertools
from pathlib import Path

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.shared.skip_logic import resolve_answers
from ldpsurvey.shared.survey import load_survey

FORM = Path(__file__).resolve().parents[1] / "data" / "xlsform" / "optional_answers.md"
RELEVANT = {
    "why": "oxen_now != oxen_ly and (answered(oxen_now) or answered(oxen_ly))",
    "same": "oxen_now == oxen_ly or not (answered(oxen_now) or answered(oxen_ly))",
    "sold": "answered(oxen_now)",
    "estimate": "not answered(oxen_now)",
}


def _xpath(name: str, now: int | None, ly: int | None) -> bool:
    """The row's relevant as ODK evaluates it: an unanswered integer is '', and '' = ''."""
    x_now, x_ly = ("" if v is None else str(v) for v in (now, ly))
    return {"why": x_now != x_ly, "same": x_now == x_ly, "sold": x_now != "",
            "estimate": x_now == ""}[name]


def test_optional_answers_are_read_with_answered_and_keep_xpaths_value(
        tmp_path: Path) -> None:
    out = tmp_path / "s.toml"
    res = CliRunner().invoke(cli, ["import", "xlsform", str(FORM), "--epsilon", "1", "--out",
                                   str(out)])
    assert res.exit_code == 0, res.output
    assert "kept 6 of 6 rows: 4 select_one, 2 integer" in res.stderr
    survey = load_survey(out)
    assert {q.id: q.relevant for q in survey.questions if q.relevant} == RELEVANT
    # reading randomized answers, each follow-up is sent by everyone ("not asked" otherwise)
    assert all(survey.question(qid).not_asked for qid in RELEVANT)
    for now, ly in itertools.product((None, 0, 3), repeat=2):
        answers = {"oxen_now": now, "oxen_ly": ly,
                   **{qid: True for qid in RELEVANT if _xpath(qid, now, ly)}}
        sent = resolve_answers(survey.questions, answers)
        for qid in RELEVANT:
            asked = sent[qid] is True
            assert asked == _xpath(qid, now, ly), (qid, now, ly)
