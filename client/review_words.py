"""`respond`'s prompts' privacy lines and review in a catalogue language other than English.

The page's sentences (client/page_words.py reads its catalogue) filled in with the numbers
client/review.py computes for English: the survey's and each question's privacy in odds words,
each answer, the exact chances of what it will be sent as (yes/no, one option, a number, an
ordinal's listed chances, a check-all-that-apply question's marks or padded items, a named
design's row, a location's spread, the "not asked" chances and paragraphs of skip logic, how
every other single-choice mechanism randomizes), the ε, the total, and a two-server survey's
review (twoserver/flow.js's sentences). The few sentences only the command line says (a
series' reuse, the total without a page's limit, a two-server survey's guarantees, what is
printed once stored) are its own catalogue's, client/messages/<lang>.json (`Words.cli`). Anything a
mechanism says that neither has is said in English and marked "[en]", as a survey string that
falls back is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ldpsurvey.shared.mechanisms import Mechanism
from ldpsurvey.shared.question_types.base import extra_values
from ldpsurvey.shared.skip_logic import NOT_ASKED
from ldpsurvey.shared.survey import Question, Survey
from ldpsurvey.shared.wording import (
    epsilon_text,
    js_number,
    odds_factor,
    pct,
    percent_sure,
    to_precision,
)

from .page_words import N, Speaker, Words
from .review import LIST_ALL_UP_TO, SET_MECHANISMS, sends_yes_no


def P(x: Any) -> Any:
    return N(pct(x))


def in_english(sentence: str, words: Words) -> str:
    """An English sentence in a review in another language, marked as fallen-back text is."""
    return sentence if words.english else f"{sentence} [en]"


def odds_params(epsilon: float, words: Words) -> dict[str, Any]:
    sure = percent_sure(epsilon)
    return {"factor": N(odds_factor(epsilon)), "half": N("50%"),
            "reach": words.t("odds.reach", sure="none" if sure is None else N(sure))}


def odds_sentence(epsilon: float, words: Words) -> str:
    return words.t("odds.nothing") if epsilon == 0 else words.t(
        "odds.sentence", **odds_params(epsilon, words))


def question_privacy(q: Question, words: Words) -> str:
    """The page's hint of one question's privacy (form.disclosed for a disclosed one)."""
    if q.disclosed:
        return words.t("form.disclosed")
    if q.central_epsilon is not None:  # twoserver/flow.js's hint and collusion
        said = [words.t("two.hint", central=N(epsilon_text(q.central_epsilon)))]
        if q.local_epsilon is not None:
            said.append(words.t("two.hintLocal", local=N(epsilon_text(q.local_epsilon))))
            said.append(words.t("two.collusionBothLocal", **odds_params(q.local_epsilon, words)))
        else:
            said.append(words.t("two.collusionBoth"))
        return " ".join(said)
    return words.t("odds.question", **odds_params(q.epsilon, words),
                   epsilon=N(epsilon_text(q.epsilon)))


def survey_privacy(survey: Survey, words: Words) -> str:
    """The page's first line about the whole survey's privacy."""
    if survey.two_server is not None:
        return words.t("two.lead")
    disclosed = sum(q.disclosed for q in survey.questions)
    odds = odds_sentence(survey.total_epsilon, words)
    if disclosed:
        return words.t("privacy.disclosed", count=disclosed, odds=odds) + "."
    return words.t("privacy.all", odds=odds[:1].upper() + odds[1:]) + "."


def answer_text(q: Question, answer: Any, shown: Any, words: Words) -> str:
    """A true answer as the respondent chose it, in the language (options by their text):
    its unit names it."""
    return q.unit.answer_words(q, answer, Speaker(words, shown))


def _option(q: Question, label: str, shown: Any) -> str:
    return shown.option(q.id, label).text if shown is not None else label


def chances(q: Question, mechanism: Mechanism, answer: Any, shown: Any,
            words: Words) -> str:
    """What the device will send for this answer, with the exact chances (review.js)."""
    name = mechanism.name
    if q.disclosed:
        return words.t("mech.disclosed")
    if q.extended:  # skip logic or special values: the extended domain (skip_review.js)
        said = _not_asked_chances(q, mechanism, answer, shown, words)
        return said if said is not None else describe(q, mechanism, words)
    own = q.unit.device_chances(q, mechanism, answer, Speaker(words, shown))  # a decimal's
    if own is not None:
        return own
    if name in SET_MECHANISMS:
        return _set_chances(mechanism, answer, words)
    if getattr(mechanism, "designed", False):
        return _design_chances(q, mechanism, answer, shown, words)
    if name == "geo_exp":
        return _spread(mechanism, mechanism.encode(answer), words)

    def quoted(label: str) -> str:
        return words.t("word.quoted", text=_option(q, label, shown))

    p = getattr(mechanism, "p_star", None)
    other = getattr(mechanism, "q_star", None)
    if name in ("binary_rr", "grr"):
        return q.unit.randomized_response_chances(q, answer, p, other, Speaker(words, shown))
    if name == "geometric":
        return words.t("review.number", **_noise_params(q, mechanism, int(answer), words))
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


# SET_MECHANISMS: check-all-that-apply's (client/review.py)


def _items(checked: int, pad: int, words: Words) -> str:
    """"2 options you checked and 1 blank" (multiselect.js items)."""
    return words.t("multi.items", checked=checked, blanks=pad - checked,
                   both="yes" if checked and pad - checked else "no")


def _set_params(mechanism: Any) -> dict[str, Any]:
    """A padded check-all-that-apply mechanism's numbers, as multiselect.js and set_cores.js
    name them."""
    k = mechanism.k
    if mechanism.name == "psfo_grr":
        return {"pad": mechanism.pad, "k": k, "blanks": mechanism.size - k,
                "p": P(mechanism.p_star), "q": P(mechanism.q_star)}
    return {"pad": mechanism.pad, "k": k, "blanks": mechanism.size - k, "g": mechanism.g,
            "others": mechanism.g - 1, "p": P(mechanism.p_bucket)}


def _set_chances(mechanism: Any, answer: Any, words: Words) -> str:
    """A check-all-that-apply answer's chances: its marks, or its padded items."""
    from .multiselect_words import chances as english

    name = mechanism.name
    k = mechanism.k
    checked = mechanism.encode(answer).bit_count()
    if name in ("option_rr", "set_ue"):
        return words.t("multi.marks", k=k, checked=checked, unchecked=k - checked,
                       p=P(mechanism.p_star), q=P(mechanism.q_star),
                       both="yes" if checked and k - checked else "no")
    if name in ("psfo_grr", "psfo_olh"):
        key = "multi.psfoGrrYours" if name == "psfo_grr" else "multi.psfoOlhYours"
        return words.t(key, **_set_params(mechanism), items=_items(checked, mechanism.pad, words))
    return in_english(english(None, mechanism, answer), words)


def _design_reports(q: Question, name: str, size: int, shown: Any, words: Words) -> list[str]:
    """A named design's reports in words (designs.js describe)."""
    if name == "crosswise":
        return [words.t("design.differ"), words.t("design.same")]
    if name == "matrix":
        return [words.t("design.report", n=y) for y in range(size)]
    speaker = Speaker(words, shown)
    return [q.unit.value_words(q, value, speaker) for value in q.unit.values(q)]


DESIGN_NAMES = {"warner": "design.warner", "crosswise": "design.crosswise",
                "forced_response": "design.forcedResponse",
                "unrelated_question": "design.unrelatedQuestion",
                "matrix": "design.matrix"}  # designs.js KNOWN_AS


def _design_chances(q: Question, mechanism: Any, answer: Any, shown: Any,
                    words: Words) -> str:
    """A named design's exact row for this answer, listed (designs.js describe)."""
    from .review import chances as english

    name = mechanism.name
    if name not in DESIGN_NAMES:
        return in_english(english(q, mechanism, answer), words)
    index = mechanism.encode(answer)
    row = mechanism.channel()[index]
    mine = -1 if name in ("crosswise", "matrix") else index
    listed = ", ".join(
        words.t("design.chanceYours" if y == mine else "design.chance", report=report, p=P(pr))
        for y, (report, pr) in enumerate(zip(
            _design_reports(q, name, len(row), shown, words), row, strict=True)))
    return words.t("design.chances", design=words.t(DESIGN_NAMES[name]), chances=listed)


def _spread(mechanism: Any, x: int, words: Words) -> str:
    """A location's spread around cell x (geo_exp.js describe; location.describe_spread)."""
    from ldpsurvey.shared.mechanisms.location import spread_km

    radius, near = spread_km(mechanism, x)
    return words.t("loc.describe", radius=N(to_precision(radius, 3)), p=P(near),
                   own=P(mechanism.geo.dense[x][x]), geo=N(js_number(mechanism.epsilon_geo)))


def _value_words(q: Question, value: Any, shown: Any, words: Words) -> str:
    """One value of a question with a "not asked" value (skip_review.js valueWords)."""
    if value == NOT_ASKED:
        return words.t("skip.notAskedQuoted")
    return q.unit.value_words(q, value, Speaker(words, shown))


def _not_asked_chances(q: Question, mechanism: Any, answer: Any, shown: Any,
                       words: Words) -> str | None:
    """skip_review.js notAskedChances: None where the general description says it."""
    name = mechanism.name
    not_asked = answer == NOT_ASKED
    if name in SET_MECHANISMS:
        k = mechanism.k - 1
        checked = 0 if not_asked else mechanism.encode(answer).bit_count()
        p, other = P(mechanism.p_star), P(mechanism.q_star)
        if name in ("option_rr", "set_ue"):
            key = "skip.marksNotAsked" if not_asked else "skip.marks" if checked else \
                "skip.marksNone"
            return words.t(key, k=k, checked=checked,
                           others=k + 1 - (1 if not_asked else checked), p=p, q=other)
        if name == "psfo_grr":
            pad = mechanism.pad
            items = words.t("skip.itemsNotAsked", blanks=pad - 1) if not_asked else \
                _items(checked, pad, words)
            return words.t("skip.psfoGrr", k=k, blanks=mechanism.size - mechanism.k,
                           items=items, p=p, q=other)
        return None
    if name == "grr":
        key = "skip.grrNotAsked" if not_asked else "skip.grr" if q.not_asked else \
            "special.grrSpecial"
        return words.t(key, answer=_value_words(q, answer, shown, words),
                       others=len(mechanism.labels) - 1, p=P(mechanism.p_star),
                       q=P(mechanism.q_star))
    if name == "asked_geometric":
        chance = {"p": P(mechanism.p_star), "q": P(mechanism.q_star)}
        if q.special:
            return _status_chances(q, mechanism, answer, shown, words, chance)
        if not_asked:
            return words.t("skip.numberNotAsked", **chance, middle=mechanism.default,
                           min=q.min, max=q.max)
        return words.t("skip.number", **chance, **_noise_params(q, mechanism, int(answer),
                                                                words))
    return None


def _status_chances(q: Question, mechanism: Any, answer: Any, shown: Any, words: Words,
                    chance: dict[str, Any]) -> str:
    """An integer with special values: its status code's chances and its number's noise
    (asked_geometric.js statusChances)."""
    extra = extra_values(q)
    statuses = [words.t("special.statusAnswer"),
                *(_value_words(q, value, shown, words) for value in extra)]
    mine = extra.index(answer) + 1 if answer in extra else 0  # 0: an answer
    values = ", ".join(w for i, w in enumerate(statuses) if i != mine)
    if mine:
        return words.t("special.statusSpecial", **chance, answer=statuses[mine], values=values,
                       middle=mechanism.default, min=q.min, max=q.max)
    return words.t("special.statusNumber", **chance, values=values,
                   **_noise_params(q, mechanism, int(answer), words))


def _noise_params(q: Question, mechanism: Any, x: int, words: Words) -> dict[str, Any]:
    """A number's noise, as review.number and skip.number name it."""
    rate = float(mechanism.rate)
    same = math.tanh(rate / 2)
    step = math.exp(rate)
    near = 2 * same / step
    return {"x": x, "below": x - 1, "above": x + 1, "same": P(same), "next": P(near),
            "further": P(max(0.0, 1 - same - near)), "step": _step_words(step, words),
            "min": q.min, "max": q.max}


def _question_texts(questions: list[Question], words: Words) -> str:
    return "; ".join(words.t("word.quoted", text=q.text) for q in questions)


def skipped_lines(questions: list[Question], values: Mapping[str, Any],
                  words: Words) -> list[str]:
    """skip_review.skipped_lines in the page's sentences (skip_review.js skippedLines)."""
    from .skip_review import skipped_questions

    hidden, public = skipped_questions(questions, values)
    lines = []
    if hidden:
        lines.append(words.t("skip.hidden", questions=_question_texts(hidden, words),
                             epsilon=N(epsilon_text(math.fsum(q.epsilon for q in hidden)))))
    if public:
        lines.append(words.t("skip.open", questions=_question_texts(public, words)))
    return lines


def _step_words(factor: float, words: Words) -> str:
    return words.t("review.stepSlightly") if factor < 1.0001 else words.t(
        "review.stepTimes", factor=N(to_precision(factor, 3)))


def describe(q: Question, mechanism: Any, words: Words) -> str:
    """How a single-choice mechanism randomizes, whatever the answer (mechanisms.js)."""
    from .review import describe as english

    name = mechanism.name
    if name in SET_MECHANISMS:
        if name in ("option_rr", "set_ue"):
            return words.t("multi.bits", k=mechanism.k, p=P(mechanism.p_star),
                           q=P(mechanism.q_star))
        if name in ("psfo_grr", "psfo_olh"):
            return words.t("multi.psfoGrr" if name == "psfo_grr" else "multi.psfoOlh",
                           **_set_params(mechanism))
        return in_english(english(q, mechanism), words)
    if name.endswith("+instantaneous"):
        first, second = mechanism.permanent, mechanism.instantaneous
        n = len(first.labels)
        return words.t("mech.twoLayer", binary="yes" if sends_yes_no(first) else "no",
                       k=n, others=n - 1, p1=P(first.p_star), q1=P(first.q_star),
                       p2=P(second.p_star), q2=P(second.q_star))
    k = mechanism.k if q.not_asked else (len(q.options) if q.options else 0)
    if name in ("binary_rr", "grr"):
        n = len(mechanism.labels)
        return words.t("mech.grr", binary="yes" if sends_yes_no(mechanism) else "no",
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
    from .skip_review import not_applying

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
    lines.extend(skipped_lines(list(survey.questions), answers, words))
    if limit is None:
        lines.append(words.cli("cli.totalNoLimit", odds=odds_sentence(total, words),
                               total=N(epsilon_text(total))))
    else:
        lines.append(words.t("review.total", odds=odds_sentence(total, words),
                             total=N(epsilon_text(total)), limit=N(epsilon_text(limit))))
    if survey.series:
        lines.append(words.cli("cli.series", series=words.t("word.quoted", text=survey.series)))
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

    def option(label: Any) -> str:
        return words.t("mech.option", option=words.t("word.quoted", text=_option(q, label, shown)))

    bits = name in ("oue", "sue", "ss", "option_rr", "set_ue")
    if q.extended:  # "not asked" or special values: indices past the options
        return _not_asked_report(q, mechanism, report, shown, words) or in_english(said, words)
    if name == "crosswise":
        return words.t("design.same" if report else "design.differ")
    if name == "matrix":
        return words.t("design.report", n=report)
    if name == "hr" and isinstance(report, int):
        return words.t("mech.number", n=report)
    if name == "geo_exp" and isinstance(report, int) and q.location is not None:
        row, col = divmod(report, q.location.cols)
        return words.t("loc.cell", r=row + 1, c=col + 1)
    if name == "psfo_grr" and isinstance(report, int):
        return option(q.options[report]) if report < len(q.options) else words.t("multi.blank")
    if name == "psfo_olh" and isinstance(report, list):
        return words.t("mech.code", code=report[0], bucket=report[1])
    own = q.unit.report_words(q, report, Speaker(words, shown))  # a yes or no, a number
    if own is not None:
        return own
    if bits and isinstance(report, list):
        return marked([v for v in range(len(q.options)) if (report[v >> 5] >> (v & 31)) & 1])
    if name == "olh" and isinstance(report, list):
        return words.t("mech.code", code=report[0], bucket=report[1])
    if isinstance(report, int) and q.options and 0 <= report < len(q.options):
        return words.t("mech.option", option=words.t(
            "word.quoted", text=_option(q, q.options[report], shown)))
    return in_english(said, words)


def two_server_review_lines(survey: Survey, answers: Mapping[str, Any], server_url: str,
                            words: Words) -> list[str]:
    """client/review.py two_server_review_lines in the page's sentences (twoserver/flow.js
    reviewList, skip_review.js twoServerSkippedLines)."""
    from .review import host
    from .skip_review import not_applying

    servers = survey.two_server
    assert servers is not None
    pair = {"leader": host(servers.leader_url or server_url), "helper": host(servers.helper_url)}
    lines = [f"{words.t('review.title')} — {survey.title} (v{survey.version})",
             words.t("two.reviewIntro")]
    for i, q in enumerate(survey.questions, 1):
        if not_applying(q, answers):
            continue
        lines.append(f"{i}. {q.text}")
        answer = answers.get(q.id)
        if answer is None:
            lines.append(f"   {words.t('two.skipped')}")
            continue
        lines.append("   " + words.t("two.mine", answer=answer_text(q, answer, None, words)))
        assert q.central_epsilon is not None
        central = N(epsilon_text(q.central_epsilon))
        if q.local_epsilon is not None:
            lines.append("   " + words.t("two.howLocal", **pair,
                                         **odds_params(q.local_epsilon, words),
                                         local=N(epsilon_text(q.local_epsilon)),
                                         central=central))
        else:
            lines.append("   " + words.t("two.how", **pair, central=central))
    hidden = [q for q in survey.questions if answers.get(q.id) == NOT_ASKED]
    if hidden:
        lines.append(words.t("skip.twoServerHidden", questions=_question_texts(hidden, words)))
    return lines


def guarantee_lines(g: Any, words: Words) -> list[str]:
    """shared/two_server/guarantees.py guarantee_statement for a two-server survey, in the
    command line's own sentences (the page says its guarantees in its own way)."""
    def g_(x: float) -> Any:
        return N(f"{x:g}")

    def advanced(c: Any) -> str:
        if c.k < 2:
            return ""
        return words.cli("cli.advancedTighter" if c.best == "advanced" else "cli.advancedLooser",
                         advanced=N(f"{c.advanced:.3g}"), delta=g_(c.delta))

    questions = sum(1 for r in g.releases if r.kind == "question")
    lines = [words.cli("cli.guaranteeCentral", central=g_(g.central.basic), questions=questions,
                       crosstabs=len(g.releases) - questions, advanced=advanced(g.central))]
    if g.local is not None and not g.exposed:
        values = sorted(set(g.local.epsilons))
        per = g_(values[0]) if len(values) == 1 else words.cli(
            "cli.range", low=g_(values[0]), high=g_(values[-1]))
        lines.append(words.cli("cli.guaranteeLocal", perQuestion=per, local=g_(g.local.basic),
                               advanced=advanced(g.local)))
    elif g.local is None:
        lines.append(words.cli("cli.guaranteeNone"))
    else:
        ids = list(g.exposed)
        names = ", ".join(ids[:5])
        if len(ids) > 5:
            names = words.cli("cli.namesMore", names=names, more=len(ids) - 5)
        lines.append(words.cli("cli.guaranteeSome", names=names, local=g_(g.local.basic),
                               advanced=advanced(g.local)))
    lines.append(words.cli("cli.guaranteePublished", optional="yes" if g.optional else "no"))
    return lines


def _not_asked_report(q: Question, mechanism: Any, report: Any, shown: Any,
                      words: Words) -> str | None:
    """skip_review.not_asked_report_words in the page's words (skip_review.js); None where it
    has none."""
    name = mechanism.name.removesuffix("+instantaneous")

    def said(value: Any) -> str:
        return _value_words(q, value, shown, words)

    if name == "asked_geometric" and q.special:  # a status code (asked_geometric.js)
        code = report[0]
        extra = extra_values(q)
        status = words.t("special.statusAnswer") if code == 1 else \
            said(extra[0 if code == 0 else code - 1])
        return words.t("special.statusReport", status=status, n=report[1])
    if name == "asked_geometric":
        number = report[1]
        return words.t("skip.askedReport" if q.min <= number <= q.max else
                       "skip.askedReportOutside", asked="yes" if report[0] == 1 else "no",
                       n=number, min=q.min, max=q.max)
    labels = list(mechanism.labels)
    if name in SET_MECHANISMS:
        if name in ("option_rr", "set_ue") and isinstance(report, list):
            marked = [said(labels[v]) for v in range(len(labels))
                      if (report[v >> 5] >> (v & 31)) & 1]
            return words.t("skip.marksSet", marks=", ".join(marked)) if marked else \
                words.t("skip.noMarkSet")
        if name == "psfo_grr" and isinstance(report, int):
            if report >= len(labels):
                return words.t("multi.blank")
            return said(NOT_ASKED) if labels[report] == NOT_ASKED else \
                words.t("mech.option", option=said(labels[report]))
        return None
    if name == "hr":
        return words.t("mech.number", n=report)
    if name in ("grr", "ordinal_exp") and isinstance(report, int):
        value = labels[report]
        if value == NOT_ASKED:
            return words.t("skip.notAskedReport")
        if value in extra_values(q):  # a special value: its label, whatever the type
            return words.t("mech.option", option=words.t("word.quoted",
                                                         text=_option(q, value, shown)))
        return q.unit.value_words(q, value, Speaker(words, shown), as_report=True)
    return None
