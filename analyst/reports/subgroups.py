"""Subgroup reports (`ldpsurvey report --by QUESTION`): per value of a disclosed question, the
ordinary estimate report of the respondents who gave it, in every report format.

Each subgroup is rendered by the single-survey renderers from an estimate document of the same
shape as /estimates, so a subgroup reads exactly like a whole-survey report; with `report
--lang` each is labelled in that language (language.py), the subgroups named by the disclosed
answer's text, JSON with `labels` and CSV with a `subgroup_text` column as well.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ldpsurvey.shared.errors import ReportRenderError

from .model import Report, answer_label, render


def subgroup_reports(survey: Mapping[str, Any], document: Mapping[str, Any],
                     language: str | None = None) -> list[tuple[str, int, Report]]:
    """(label, exact size, report) per subgroup of the document; each report labelled in
    `language` (a language of the survey) when given."""
    try:
        parts = [(answer_label(g["value"]), int(g["n"]), Report(survey, {
            "survey": document["survey"], "version": document["version"],
            "confidence": document["confidence"], "n_submissions": int(g["n"]),
            "questions": g["questions"],
            **({"design": document["design"]} if document.get("design") else {})}))
            for g in document["subgroups"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportRenderError(f"malformed subgroup document: {exc}") from None
    if language is None:
        return parts
    from .language import in_language

    return [(label, n, in_language(report, language)) for label, n, report in parts]


def render_subgroups(survey: Mapping[str, Any], document: Mapping[str, Any], fmt: str,
                     language: str | None = None) -> str:
    """The subgroup document in one report format, labelled in `language` when given (one
    of the survey's languages: language.LanguageRequest.language)."""
    by = str(document.get("by"))
    parts = subgroup_reports(survey, document, language)
    shown = None  # report --lang: each subgroup's value in the language
    carried = bool(document.get("carried"))  # a covariate the invitation carried, not a question
    if language is not None and not carried:
        from .language import answer_names, survey_labels

        shown = answer_names(survey, language, by, [label for label, _, _ in parts])
        if fmt == "json":
            document = {**document, "labels": survey_labels(survey, language)}
    if fmt == "json":
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return _csv(by, parts, shown)
    if fmt == "html":
        return _html(by, parts, shown)
    heading = "## {}\n\n" if fmt == "md" else "=== {} ===\n"
    lead = (f"# Subgroups of {by}\n\n" if fmt == "md" else f"Subgroups of {by}\n\n")
    whose = (f"invitation code carried {by!r} with the value shown" if carried
             else f"disclosed answer to {by!r} is the value shown")
    note = (f"Each subgroup: respondents whose {whose} (exact count); estimates within it use "
            "each question's own randomized-response estimator.\n\n")
    return lead + note + "\n".join(
        heading.format(f"{by} = {(shown or {}).get(label, label)} (n = {n:,})")
        + render(report, fmt) for label, n, report in parts)


def _csv(by: str, parts: list[tuple[str, int, Report]],
         shown: Mapping[str, str] | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for i, (label, n, report) in enumerate(parts):
        rows = list(csv.reader(io.StringIO(render(report, "csv"))))
        if i == 0:
            writer.writerow(["by", "subgroup", "subgroup_n", *rows[0],
                             *(("subgroup_text",) if shown is not None else ())])
        for row in rows[1:]:
            writer.writerow([by, label, n, *row,
                             *((shown.get(label, label),) if shown is not None else ())])
    return out.getvalue()


def _html(by: str, parts: list[tuple[str, int, Report]],
          shown: Mapping[str, str] | None = None) -> str:
    from html import escape

    pages = [render(report, "html") for _, _, report in parts]
    if not pages:
        raise ReportRenderError(f"{by!r} has no values to group by")
    head = pages[0].split("<main>", 1)[0] + "<main>"
    tail = "</main>" + pages[0].rsplit("</main>", 1)[1]
    body = [f"<h1>Subgroups of {escape(by)}</h1>"]
    for (label, n, _), page in zip(parts, pages, strict=True):
        inner = page.split("<main>", 1)[1].rsplit("</main>", 1)[0]
        body.append(f'<section class="subgroup"><h1>{escape(by)} = '
                    f"{escape((shown or {}).get(label, label))} "
                    f"(n = {n:,})</h1>{inner.replace('<h1>', '<h2>').replace('</h1>', '</h2>')}"
                    "</section>")
    return head + "".join(body) + tail


def fetch_subgroups(server_url: str, survey_id: str, token: str, by: str,
                    confidence: float = 0.95, version: int | None = None,
                    timeout: float = 30.0, bins: Sequence[int] | None = None
                    ) -> tuple[Any, Any]:
    """(subgroup document, survey) from a server."""
    from .sources import fetch_with_survey

    params = {"by": by, "confidence": repr(float(confidence))}
    if bins is not None:
        params["bins"] = ",".join(str(b) for b in bins)
    return fetch_with_survey(server_url, survey_id, "subgroups", params, token, version,
                             timeout)


def db_subgroups(target: str, survey_id: str, by: str, confidence: float = 0.95,
                 version: int | None = None, bins: Sequence[int] | None = None
                 ) -> tuple[Any, Any]:
    """(subgroup document, survey) from a server database opened read-only: the same function
    the HTTP endpoint runs."""
    from ldpsurvey.server import subgroups, surveys

    from .sources import read_only_store

    with read_only_store(target) as store:
        record = surveys.get(store, survey_id, version)
        return (subgroups.subgroups(store, survey_id, record.version, by, confidence, bins),
                record.manifest["survey"])
