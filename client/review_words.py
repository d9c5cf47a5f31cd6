"""`respond`'s prompts' privacy lines and review in a catalogue language other than English.

The page's sentences (client/page_words.py reads its catalogue) filled in with the numbers
client/review.py computes for English: the survey's and each question's privacy in odds words,
each answer, the exact chances of what it will be sent as (yes/no, one option, a number, an
ordinal's listed chances, a check-all-that-apply question's marks, and how every other
single-choice mechanism randomizes), the ε, the total. What the catalogue has no sentence for
on the command line (a padded check-all-that-apply mechanism, a named design, a location,
questions skip logic leaves out, a series, a two-server survey) is said in English and marked
"[en]", as a survey string that falls back is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..shared.mechanisms import Mechanism
from ..shared.survey import Question, Survey
from ..shared.wording import pct, to_precision
from .page_words import N, Words


def P(x: Any) -> Any:
    return N(pct(x))


def in_english(sentence: str, words: Words) -> str:
    """An English sentence in a review in another language, marked as fallen-back text is."""
    return sentence if words.english else f"{sentence} [en]"


def odds_params(epsilon: float, words: Words) -> dict[str, Any]:
    from .review import odds_factor, percent_sure

    sure = percent_sure(epsilon)
    return {"factor": N(odds_factor(epsilon)), "half": N("50%"),
            "reach": words.t("odds.reach", sure="none" if sure is None else N(sure))}


def odds_sentence(epsilon: float, words: Words) -> str:
    return words.t("odds.nothing") if epsilon == 0 else words.t(
        "odds.sentence", **odds_params(epsilon, words))


def question_privacy(q: Question, words: Words) -> str:
    """The page's hint of one question's privacy (form.disclosed for a disclosed one)."""
    from .review import epsilon_text
    from .review import question_privacy as english

    if q.disclosed:
        return words.t("form.disclosed")
    if q.central_epsilon is not None:
        return in_english(english(q), words)
    return words.t("odds.question", **odds_params(q.epsilon, words),
                   epsilon=N(epsilon_text(q.epsilon)))


def survey_privacy(survey: Survey, words: Words) -> str:
    """The page's first line about the whole survey's privacy."""
    from .review import survey_privacy as english

    if survey.two_server is not None:
        return in_english(english(survey), words)
    disclosed = sum(q.disclosed for q in survey.questions)
    odds = odds_sentence(survey.total_epsilon, words)
    if disclosed:
        return words.t("privacy.disclosed", count=disclosed, odds=odds) + "."
    return words.t("privacy.all", odds=odds[:1].upper() + odds[1:]) + "."


def answer_text(q: Question, answer: Any, shown: Any, words: Words) -> str:
    """A true answer as the respondent chose it, in the language (options by their text)."""
    if q.type == "binary":
        return words.t("word.yes" if answer else "word.no")
    if q.type == "multiselect":
        return ", ".join(_option(q, o, shown) for o in answer) if answer else words.t(
            "multi.none")
    if q.type in ("categorical", "ordinal"):
        return _option(q, answer, shown)
    return str(answer)


def _option(q: Question, label: str, shown: Any) -> str:
    return shown.option(q.id, label).text if shown is not None else label


def _yes_no(value: bool, words: Words) -> str:
    return words.t("word.yesQuoted" if value else "word.noQuoted")


def chances(q: Question, mechanism: Mechanism, answer: Any, shown: Any,
            words: Words) -> str:
    """What the device will send for this answer, with the exact chances (review.js)."""
    from .review import LIST_ALL_UP_TO
    from .review import chances as english

    name = mechanism.name
    if q.disclosed:
        return words.t("mech.disclosed")
    if q.type == "multiselect" and name in ("option_rr", "set_ue") and not q.not_asked:
        k = mechanism.k  # type: ignore[attr-defined]
        checked = mechanism.encode(answer).bit_count()
        return words.t("multi.marks", k=k, checked=checked, unchecked=k - checked,
                       p=P(mechanism.p_star), q=P(mechanism.q_star),  # type: ignore[attr-defined]
                       both="yes" if checked and k - checked else "no")
    if q.not_asked or q.type in ("multiselect", "location") or getattr(
            mechanism, "designed", False):
        return in_english(english(q, mechanism, answer), words)

    def quoted(label: str) -> str:
        return words.t("word.quoted", text=_option(q, label, shown))

    p = getattr(mechanism, "p_star", None)
    other = getattr(mechanism, "q_star", None)
    if name in ("binary_rr", "grr"):
        if q.type == "binary":
            return words.t("review.binary", answer=_yes_no(answer, words),
                           other=_yes_no(not answer, words), p=P(p), q=P(other))
        return words.t("review.grr", answer=quoted(answer), p=P(p),
                       others=len(q.options) - 1, q=P(other))
    if name == "geometric":
        rate = float(mechanism.rate)  # type: ignore[attr-defined]
        same = math.tanh(rate / 2)
        step = math.exp(rate)
        near = 2 * same / step
        x = int(answer)
        return words.t("review.number", x=x, below=x - 1, above=x + 1, same=P(same),
                       next=P(near), further=P(max(0.0, 1 - same - near)),
                       step=_step_words(step, words), min=q.min, max=q.max)
    if name == "ordinal_exp" and len(q.options) <= LIST_ALL_UP_TO:
        at = q.options.index(answer)
        b = float(mechanism.base)  # type: ignore[attr-defined]
        weights = [b ** -abs(at - y) for y in range(len(q.options))]
        total = sum(weights)
        return words.t("review.ordinal", list=", ".join(
            words.t("review.ordinalYours" if y == at else "review.ordinalOther",
                    option=quoted(o), p=P(weights[y] / total))
            for y, o in enumerate(q.options)))
    return describe(q, mechanism, words)


def _step_words(factor: float, words: Words) -> str:
    return words.t("review.stepSlightly") if factor < 1.0001 else words.t(
        "review.stepTimes", factor=N(to_precision(factor, 3)))


def describe(q: Question, mechanism: Any, words: Words) -> str:
    """How a single-choice mechanism randomizes, whatever the answer (mechanisms.js)."""
    from .review import describe as english

    name = mechanism.name
    k = mechanism.k if q.not_asked else (len(q.options) if q.options else 0)
    if name in ("binary_rr", "grr"):
        n = len(mechanism.labels)
        return words.t("mech.grr", binary="yes" if q.type == "binary" and n == 2 else "no",
                       k=n, others=n - 1, p=P(mechanism.p_star), q=P(mechanism.q_star))
    if name in ("oue", "sue"):
        return words.t("mech.unary", k=k, p=P(mechanism.p_star), q=P(mechanism.q_star))
    if name == "ss":
        return words.t("mech.ss", d=mechanism.subset_size, k=k, p=P(mechanism.p_star))
    if name == "olh":
        return words.t("mech.olh", k=k, g=mechanism.g, p=P(mechanism.p_bucket),
                       others=mechanism.g - 1)
    if name == "hr":
        return words.t("mech.hr", top=mechanism.size - 1, p=P(mechanism.p_star))
    if name == "ordinal_exp":
        b = float(mechanism.base)
        mid = (k - 1) // 2
        z = sum(b ** -abs(mid - y) for y in range(k))
        return words.t("mech.ordinal", b=N(to_precision(b, 4)), p=P(1 / z))
    return in_english(english(q, mechanism), words)


def review_lines(survey: Survey, answers: Mapping[str, Any],
                 mechanisms: Mapping[str, Mechanism], shown: Any, words: Words,
                 limit: float | None = None) -> list[str]:
    """client/review.py review_lines in the page's sentences of a catalogue language."""
    from .review import epsilon_text
    from .skip_review import not_applying, skipped_lines

    disclosed = any(q.disclosed for q in survey.questions)
    lines = [f"{words.t('review.title')} — {survey.title} (v{survey.version})",
             words.t("review.introDisclosed" if disclosed else "review.intro")]
    total = 0.0
    for i, q in enumerate(survey.questions, 1):
        if not_applying(q, answers):
            total += q.epsilon if answers.get(q.id) is not None else 0.0
            continue
        lines.append(f"{i}. {q.text}")
        answer = answers.get(q.id)
        if answer is None:
            lines.append(f"   {words.t('review.skipped')}")
            continue
        mine = answer_text(q, answer, shown, words)
        lines.append("   " + words.t("review.mineDisclosed" if q.disclosed else "review.mine",
                                     answer=mine))
        lines.append(f"   {chances(q, mechanisms[q.id], answer, shown, words)}")
        if q.disclosed:
            lines.append(f"   {words.t('review.disclosedCost')}")
            continue
        total += q.epsilon
        lines.append(f"   {question_privacy(q, words)}")
    lines.extend(in_english(line, words) for line in skipped_lines(survey.questions, answers))
    if limit is None:
        lines.append(in_english(f"In total, {odds_sentence(total, Words())} (ε = "
                                f"{epsilon_text(total)} in total).", words))
    else:
        lines.append(words.t("review.total", odds=odds_sentence(total, words),
                             total=N(epsilon_text(total)), limit=N(epsilon_text(limit))))
    if survey.series:
        lines.append(in_english(f"(Series {survey.series!r}: an answer the same as in an "
                                "earlier round re-sends the report kept for it and costs no "
                                "more.)", words))
    return lines


def report_words(q: Question, mechanism: Mechanism, report: Any, shown: Any,
                 words: Words) -> str:
    """A stored report in the language's words (the page's explain: mech.option, mech.number,
    word.yesReport, mech.marked), options by their text in it; English for the rest, marked."""
    from .review import report_words as english

    name = mechanism.name
    said = english(q, mechanism, report)
    if words.english:
        return said

    def marked(indices: list[int]) -> str:
        return words.t("mech.marked", options=", ".join(
            words.t("word.quoted", text=_option(q, q.options[v], shown)) for v in indices)
        ) if indices else words.t("mech.noneMarked")

    bits = name in ("oue", "sue", "ss", "option_rr", "set_ue")
    if q.not_asked or name in ("crosswise", "matrix", "hr", "geo_exp", "psfo_grr", "psfo_olh"):
        return in_english(said, words)
    if q.type == "binary" and isinstance(report, (bool, int)):
        return words.t("word.yesReport" if report else "word.noReport")
    if q.type == "integer" and isinstance(report, int):
        return words.t("mech.number", n=report)
    if bits and isinstance(report, list):
        return marked([v for v in range(len(q.options)) if (report[v >> 5] >> (v & 31)) & 1])
    if name == "olh" and isinstance(report, list):
        return words.t("mech.code", code=report[0], bucket=report[1])
    if isinstance(report, int) and q.options and 0 <= report < len(q.options):
        return words.t("mech.option", option=words.t(
            "word.quoted", text=_option(q, q.options[report], shown)))
    return in_english(said, words)
