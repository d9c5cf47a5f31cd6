"""A regression document (GET .../regression) as a table, JSON, CSV or one self-contained HTML
page with a forest plot (odds ratios with their intervals on a log scale; slopes for linear)."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Mapping
from html import escape
from typing import Any

from ...shared.errors import ReportRenderError
from ...shared.regression import INTERCEPT
from .html import page_head

REGRESSION_FORMATS = ("table", "json", "csv", "html")
CSV_COLUMNS = ("survey", "version", "kind", "outcome", "outcome_level", "n", "n_dropped",
               "converged", "coefficient", "estimate", "std_error", "z", "p_value", "ci_low",
               "ci_high", "odds_ratio", "or_low", "or_high", "se_inflation", "verdict")
CSS = ("body{font-family:system-ui,sans-serif;max-width:960px;margin:24px auto;padding:0 12px;"
       "color:#1f2328}table{border-collapse:collapse}td,th{padding:4px 10px;"
       "border-bottom:1px solid #e5e7eb;text-align:right}td:first-child,th:first-child"
       "{text-align:left}.note{color:#57606a}img{max-width:100%}"
       ".scroll{overflow-x:auto}")
READING = ("se × privacy: the standard error divided by the one the same fit would have on the "
           "true answers (what randomization costs). 'no clear effect': the interval includes "
           "no effect and stays between a halving and a doubling of the odds (linear: within "
           "±10% of the outcome's range); 'too noisy to say': it includes no effect but reaches "
           "past a halving or a doubling (linear: past ±10% of the range), so an effect that "
           "large still fits the data. The intercept (the reference group's level) gets no "
           "verdict.")


def render_regression(doc: Mapping[str, Any], fmt: str) -> str:
    """The regression document in one format."""
    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        if fmt == "csv":
            return _csv(doc)
        if fmt == "table":
            return _table(doc)
        if fmt == "html":
            return _html(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportRenderError(f"malformed regression document: {exc}") from None
    raise ReportRenderError(f"unknown format {fmt!r}; expected one of "
                            f"{', '.join(REGRESSION_FORMATS)}")


def headline(doc: Mapping[str, Any]) -> str:
    """One sentence: what was regressed on what, n, convergence."""
    covs = ", ".join(doc.get("covariates") or []) or "nothing (intercept only)"
    if doc["kind"] == "logistic":
        what = f"Logistic regression of {doc['outcome']} = {doc['outcome_level']}"
    else:
        what = f"Linear regression of {doc['outcome']}"
    if doc["kind"] == "linear":
        status = "solved in closed form"
    else:
        status = (f"converged in {doc['iterations']} iterations" if doc["converged"]
                  else "DID NOT CONVERGE")
    return (f"{what} on {covs}: n = {doc['n']:,} submissions ({doc['n_dropped']:,} left out "
            f"for a missing answer), {doc['confidence']:.0%} intervals, {status}.")


def _num(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _p(x: Any) -> str:
    return "n/a" if x is None else "<0.001" if x < 0.001 else f"{x:.3f}"


def _rows(doc: Mapping[str, Any]) -> list[list[str]]:
    logistic = doc["kind"] == "logistic"
    rows = []
    for c in doc["coefficients"]:
        if logistic:
            interval = f"{_num(c['or_low'])} to {_num(c['or_high'])}"
            rows.append([c["name"], _num(c["estimate"]), _num(c["std_error"]),
                         _num(c["odds_ratio"]), interval, _p(c["p_value"]),
                         _num(c["se_inflation"], 2), c["verdict"]])
        else:
            interval = f"{_num(c['ci_low'])} to {_num(c['ci_high'])}"
            rows.append([c["name"], _num(c["estimate"]), _num(c["std_error"]), interval,
                         _p(c["p_value"]), _num(c["se_inflation"], 2), c["verdict"]])
    return rows


def _header(doc: Mapping[str, Any]) -> list[str]:
    conf = f"{doc['confidence']:.0%}"
    if doc["kind"] == "logistic":
        return ["coefficient", "log-odds", "s.e.", "odds ratio", f"{conf} CI (odds ratio)", "p",
                "se × privacy", "verdict"]
    return ["coefficient", "slope", "s.e.", f"{conf} CI", "p", "se × privacy", "verdict"]


def _table(doc: Mapping[str, Any]) -> str:
    header, rows = _header(doc), _rows(doc)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [headline(doc), ""]
    for r in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) if i == 0 or i == len(r) - 1 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(r, widths, strict=True))))
    lines += ["", *[f"note: {n}" for n in doc.get("notes") or []], READING]
    return "\n".join(lines) + "\n"


def _csv(doc: Mapping[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in doc["coefficients"]:
        writer.writerow([doc["survey"], doc["version"], doc["kind"], doc["outcome"],
                         doc.get("outcome_level") or "", doc["n"], doc["n_dropped"],
                         doc["converged"], c["name"],
                         *("" if c.get(k) is None else repr(c[k]) for k in CSV_COLUMNS[9:-1]),
                         c["verdict"]])
    return out.getvalue()


def forest_png(doc: Mapping[str, Any]) -> str:
    """The forest plot as base64 PNG: one row per coefficient (not the intercept), point and
    interval; odds ratios on a log axis with a line at 1, slopes with a line at 0."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    logistic = doc["kind"] == "logistic"
    coefs = [c for c in doc["coefficients"] if c["name"] != INTERCEPT]
    fig = Figure(figsize=(8, 0.5 * max(len(coefs), 1) + 1.2), dpi=120)
    FigureCanvasAgg(fig)
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
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(coefs)), [c["name"] for c in reversed(coefs)])
    ax.set_xlabel(f"odds ratio ({doc['confidence']:.0%} interval; grey: too noisy to say)"
                  if logistic else f"slope ({doc['confidence']:.0%} interval)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _html(doc: Mapping[str, Any]) -> str:
    header, rows = _header(doc), _rows(doc)
    table = ("<div class=\"scroll\"><table><tr>"
             + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
             + "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in r) + "</tr>"
                       for r in rows) + "</table></div>")
    notes = "".join(f"<p class=\"note\">{escape(n)}</p>" for n in doc.get("notes") or [])
    head = "".join(page_head(f"Regression: {doc['outcome']}", CSS))
    return (f"{head}<h1>{escape(str(doc['survey']))} v{escape(str(doc['version']))}</h1>"
            f"<p>{escape(headline(doc))}</p>"
            "<img class=\"chart\" alt=\"forest plot\" "
            f"src=\"data:image/png;base64,{forest_png(doc)}\">"
            f"{table}{notes}<p class=\"note\">{escape(READING)}</p></main></body></html>\n")
