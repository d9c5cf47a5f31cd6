"""A regression document (GET .../regression) as a table, JSON, CSV or one self-contained HTML
page with a forest plot (odds ratios with their intervals on a log scale; slopes for linear).
The HTML page is the estimates report's page (phone layout, scroll cues, a phone drawing of
the plot) and names the survey by its title and coefficients by question text and option
label, ids in small print. With `regress --lang` (analyst/reports/language.py) the words are
the survey's text in that language in every format: the table names questions and
coefficients in words too (ids in brackets), JSON adds `labels`, CSV `outcome_text`,
`outcome_level_text` and `coefficient_text`."""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from ldpsurvey.shared.errors import ReportRenderError
from ldpsurvey.shared.regression import INTERCEPT

from .charts import DESKTOP, Chart, ChartSize, responsive, wrap
from .html import CSS as REPORT_CSS
from .html import chart_img, page_head

if TYPE_CHECKING:  # matplotlib is imported where it draws (charts.py)
    from matplotlib.figure import Figure

REGRESSION_FORMATS = ("table", "json", "csv", "html")
CSV_COLUMNS = ("survey", "version", "kind", "outcome", "outcome_level", "n", "n_dropped",
               "converged", "coefficient", "estimate", "std_error", "z", "p_value", "ci_low",
               "ci_high", "odds_ratio", "or_low", "or_high", "se_inflation", "verdict")
# a design-based fit adds these: the design's df (R's degf), the residual df of its t
# intervals and p-values (degf + 1 - coefficients, R's svyglm; empty: normal) and the quantile
DESIGN_COLUMNS = ("df", "residual_df", "interval_quantile")
# `regress --lang` adds these: the outcome, its modelled level and each coefficient in words.
LANGUAGE_COLUMNS = ("outcome_text", "outcome_level_text", "coefficient_text")
CSS = REPORT_CSS + "td:first-child{min-width:12em}"  # the estimates report's page, phone rules
READING = ("se × privacy: the standard error divided by the one the same fit would have on the "
           "true answers (what randomization costs). 'no clear effect': the interval includes "
           "no effect and stays between a halving and a doubling of the odds (linear: within "
           "±10% of the outcome's range); 'too noisy to say': it includes no effect but reaches "
           "past a halving or a doubling (linear: past ±10% of the range), so an effect that "
           "large still fits the data. The intercept (the reference group's level) gets no "
           "verdict.")


def render_regression(doc: Mapping[str, Any], fmt: str,
                      survey: Mapping[str, Any] | None = None,
                      language: str | None = None) -> str:
    """The regression document in one format; `survey` (the definition of the version the
    document is of) gives the HTML page its title and the questions' texts and option labels
    (ids in small print), where the text formats keep the ids. `language` (one of the
    survey's, `regress --lang`) puts those words in that language, in every format."""
    names = Names(survey, language)
    if fmt == "json":
        if language is not None:  # the text, beside the unchanged numbers
            from .language import labels_for

            doc = {**doc, "labels": labels_for(names.survey_text, survey or {},
                                               [doc["outcome"], *(doc.get("covariates")
                                                                  or [])])}
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        if fmt == "csv":
            return _csv(doc, names if language is not None else None)
        if fmt == "table":
            return _table(doc, names if language is not None else None)
        if fmt == "html":
            return _html(doc, names)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportRenderError(f"malformed regression document: {exc}") from None
    raise ReportRenderError(f"unknown format {fmt!r}; expected one of "
                            f"{', '.join(REGRESSION_FORMATS)}")


@dataclass(frozen=True)
class Names:
    """Questions and coefficients in words, from the survey definition when there is one:
    'sex=m' is 'Sex?: m', with the id kept for the small print (ids never contain '=')."""

    survey: Mapping[str, Any] | None = None
    # regress --lang: the survey's language the words are in (None: the survey's own)
    language: str | None = None

    @property
    def survey_text(self) -> Any:
        """The survey's text in `language` (a SurveyText), None without one."""
        if self.language is None or self.survey is None:
            return None
        from ldpsurvey.shared.translations import SurveyText

        return SurveyText(self.survey, self.language)

    def text(self, qid: str) -> str:
        for q in (self.survey or {}).get("questions", []):
            if q.get("id") == qid:
                if self.language is not None:
                    return self.survey_text.question(qid).text or qid
                return str(q.get("text") or qid)
        return qid

    def level(self, qid: str, label: str) -> str:
        """An answer's label in words: an option's text in `language` (else the label)."""
        if self.language is None:
            return label
        from .language import answer_text

        question = next((q for q in (self.survey or {}).get("questions", [])
                         if q.get("id") == qid), None)
        return answer_text(self.survey_text, question, label)

    def coefficient(self, name: str) -> str:
        if name == INTERCEPT:
            return "intercept (the reference group)"
        qid, eq, label = name.partition("=")
        return f"{self.text(qid)}: {self.level(qid, label)}" if eq else self.text(qid)

    def short(self, name: str, width: int) -> str:
        """A coefficient for a chart's axis: the question's text shortened, then the label."""
        if name == INTERCEPT or self.survey is None:
            return name
        qid, eq, label = name.partition("=")
        text = textwrap.shorten(self.text(qid), 2 * width, placeholder="…")
        return f"{text}: {self.level(qid, label)}" if eq else text


def headline(doc: Mapping[str, Any], names: Names | None = None) -> str:
    """One sentence: what was regressed on what, n, convergence (questions by their text
    when `names` knows the survey)."""
    names = names or Names()
    covs = "; ".join(names.text(c) for c in doc.get("covariates") or []) or (
        "nothing (intercept only)")
    if doc["kind"] == "logistic":
        what = (f"Logistic regression of {names.text(doc['outcome'])} = "
                f"{names.level(doc['outcome'], str(doc['outcome_level']))}")
    else:
        what = f"Linear regression of {names.text(doc['outcome'])}"
    if doc["kind"] == "linear":
        status = "solved in closed form"
    else:
        status = (f"converged in {doc['iterations']} iterations" if doc["converged"]
                  else "DID NOT CONVERGE")
    return (f"{what} on {covs}: n = {doc['n']:,} submissions ({doc['n_dropped']:,} left out "
            f"for a missing answer), {doc['confidence']:.0%} intervals, {status}.")


def design_line(doc: Mapping[str, Any]) -> str | None:
    """A design-based fit's degrees of freedom and the quantile its intervals and p-values
    use (None for a fit without a design)."""
    design = doc.get("design")
    if not design:
        return None
    df, residual = design.get("df"), design.get("residual_df")
    if residual is None:
        return (f"Design-based: {df} design degrees of freedom; intervals and p-values from "
                "the normal quantile (--interval-quantile normal).")
    return (f"Design-based: intervals and p-values from Student's t with {residual:g} "
            f"residual degrees of freedom (the design's {df} + 1 - "
            f"{len(doc['coefficients'])} coefficients, as R's svyglm); the z column is that "
            "t statistic.")


def _num(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _p(x: Any) -> str:
    return "n/a" if x is None else "<0.001" if x < 0.001 else f"{x:.3f}"


def _rows(doc: Mapping[str, Any], names: Names | None = None) -> list[list[str]]:
    """The coefficient table's cells; `names` (regress --lang) names each coefficient in
    words, its name in brackets."""
    logistic = doc["kind"] == "logistic"
    rows = []
    for c in doc["coefficients"]:
        name = c["name"] if names is None or c["name"] == INTERCEPT else (
            f"{names.coefficient(c['name'])} [{c['name']}]")
        if logistic:
            interval = f"{_num(c['or_low'])} to {_num(c['or_high'])}"
            rows.append([name, _num(c["estimate"]), _num(c["std_error"]),
                         _num(c["odds_ratio"]), interval, _p(c["p_value"]),
                         _num(c["se_inflation"], 2), c["verdict"]])
        else:
            interval = f"{_num(c['ci_low'])} to {_num(c['ci_high'])}"
            rows.append([name, _num(c["estimate"]), _num(c["std_error"]), interval,
                         _p(c["p_value"]), _num(c["se_inflation"], 2), c["verdict"]])
    return rows


def _header(doc: Mapping[str, Any]) -> list[str]:
    conf = f"{doc['confidence']:.0%}"
    if doc["kind"] == "logistic":
        return ["coefficient", "log-odds", "s.e.", "odds ratio", f"{conf} CI (odds ratio)", "p",
                "se × privacy", "verdict"]
    return ["coefficient", "slope", "s.e.", f"{conf} CI", "p", "se × privacy", "verdict"]


def _table(doc: Mapping[str, Any], names: Names | None = None) -> str:
    """The terminal table: ids, or with `names` (regress --lang) questions in words."""
    header, rows = _header(doc), _rows(doc, names)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    design = design_line(doc)
    lines = [headline(doc, names), *([] if design is None else [design]), ""]
    for r in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) if i == 0 or i == len(r) - 1 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(r, widths, strict=True))))
    lines += ["", *[f"note: {n}" for n in doc.get("notes") or []], READING]
    return "\n".join(lines) + "\n"


def _csv(doc: Mapping[str, Any], names: Names | None = None) -> str:
    """One line per coefficient; `names` (regress --lang) adds the words in three columns."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    design = doc.get("design")
    writer.writerow((*CSV_COLUMNS, *(DESIGN_COLUMNS if design else ()),
                     *(LANGUAGE_COLUMNS if names is not None else ())))
    degrees = () if not design else tuple("" if design.get(k) is None else str(design[k])
                                           for k in DESIGN_COLUMNS)
    outcome, level = doc["outcome"], doc.get("outcome_level") or ""
    words = () if names is None else (names.text(outcome),
                                      names.level(outcome, str(level)) if level else "")
    for c in doc["coefficients"]:
        writer.writerow([doc["survey"], doc["version"], doc["kind"], doc["outcome"],
                         doc.get("outcome_level") or "", doc["n"], doc["n_dropped"],
                         doc["converged"], c["name"],
                         *("" if c.get(k) is None else repr(c[k]) for k in CSV_COLUMNS[9:-1]),
                         c["verdict"], *degrees,
                         *(() if names is None else (*words, names.coefficient(c["name"])))])
    return out.getvalue()


def forest_chart(doc: Mapping[str, Any], names: Names | None = None) -> Chart | None:
    """The forest plot, drawn for a desktop and a phone (`charts.responsive`); None without a
    coefficient besides the intercept."""
    names = names or Names()
    if not any(c["name"] != INTERCEPT for c in doc["coefficients"]):
        return None
    return responsive(lambda size: forest_figure(doc, names, size))


def forest_figure(doc: Mapping[str, Any], names: Names, size: ChartSize = DESKTOP) -> Figure:
    """One row per coefficient (not the intercept), point and interval; odds ratios on a log
    axis with a line at 1, slopes with a line at 0."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    logistic = doc["kind"] == "logistic"
    coefs = [c for c in doc["coefficients"] if c["name"] != INTERCEPT]
    labels = [wrap(names.short(c["name"], size.wrap), size.wrap) for c in reversed(coefs)]
    lines = sum(1 + label.count("\n") for label in labels)
    fig = Figure(figsize=(size.width_in, size.scale * (0.2 * lines + 0.15 * len(coefs) + 1.1)),
                 layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for i, c in enumerate(reversed(coefs)):
        point = c["odds_ratio"] if logistic else c["estimate"]
        low, high = (c["or_low"], c["or_high"]) if logistic else (c["ci_low"], c["ci_high"])
        noisy = c["verdict"] == "too noisy to say"
        colour = "#9ca3af" if noisy else "#3b6ea8"
        if low is not None and high is not None:
            ax.plot([low, high], [i, i], color=colour, linewidth=2)
        if point is not None:
            ax.plot([point], [i], "o", color=colour)
    ax.axvline(1.0 if logistic else 0.0, color="#c23b22", linewidth=1)
    if logistic:  # plain ticks (0.2, 0.5, 1, 2, 5) a reader takes in at a glance
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(coefs)), labels, fontsize=size.font - 1)
    ax.tick_params(axis="x", labelsize=size.font - 1)
    ax.set_xlabel(wrap(f"odds ratio ({doc['confidence']:.0%} interval; grey: too noisy to say)"
                       if logistic else f"slope ({doc['confidence']:.0%} interval)",
                       int(size.legend_chars * 0.7)), fontsize=size.font)
    return fig


def _html(doc: Mapping[str, Any], names: Names) -> str:
    header, rows = _header(doc), _rows(doc)
    body = []
    for c, r in zip(doc["coefficients"], rows, strict=True):
        words = names.coefficient(c["name"])
        first = escape(words) + ("" if words == c["name"] else
                                 f' <span class="qid">{escape(c["name"])}</span>')
        body.append(f"<tr><td>{first}</td>"
                    + "".join(f"<td>{escape(cell)}</td>" for cell in r[1:]) + "</tr>")
    table = ("<div class=\"scroll\"><table><tr>"
             + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
             + "".join(body) + "</table></div>")
    notes = "".join(f"<p class=\"note\">{escape(n)}</p>" for n in doc.get("notes") or [])
    title = str((names.survey or {}).get("title") or doc["survey"])
    if names.survey_text is not None:
        title = names.survey_text.title().text or str(doc["survey"])
    head = "".join(page_head(f"{title}: regression of {names.text(doc['outcome'])}", CSS))
    chart = forest_chart(doc, names)
    plot = "" if chart is None else chart_img(chart, "forest plot of the coefficients")
    design = design_line(doc)
    degrees = "" if design is None else f"<p>{escape(design)}</p>"
    return (f"{head}<h1>{escape(title)}</h1>"
            f'<p class="sub">Survey <span class="qid">{escape(str(doc["survey"]))}</span> '
            f"version {escape(str(doc['version']))}</p>"
            f"<p>{escape(headline(doc, names))}</p>{degrees}"
            f"{plot}{table}{notes}<p class=\"note\">{escape(READING)}</p></main></body></html>\n")
