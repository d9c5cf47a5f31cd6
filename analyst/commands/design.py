"""The design options the analyst commands share (`report`, `regress`): where the weights come
from, calibration to population totals, the variance method and the single-PSU rule.

Any of them makes the command design-based (docs/weights.md); without them it gives today's
simple-random-sample estimates, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from ldpsurvey.shared.design_frame import LONELY_PSU

VARIANCES = ("linearized", "jk1", "jkn", "bootstrap", "groups")
INTERVAL_QUANTILES = ("t", "normal")  # shared/design/estimators.py QUANTILES
_FILE = click.Path(dir_okay=False, path_type=Path)


def design_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--weighted, --frame/--key, --poststratify/--rake/--calibrate (+ --bounds,
    --max-iterations), --variance (+ --replicates) and --lonely-psu."""
    for option in reversed((
        click.option("--weighted", is_flag=True,
                     help="Design-based: weight each respondent by the design stored with "
                          "their invitation code (invites create --design; docs/weights.md)."),
        click.option("--frame", "frame_path", type=_FILE,
                     help="Design-based, the design from this frame CSV (id, weight, stratum, "
                          "psu, fpc), joined by --key."),
        click.option("--key", "frame_key", metavar="QUESTION",
                     help="With --frame: the disclosed question whose answer is the frame id."),
        click.option("--poststratify", "poststratify_path", type=_FILE,
                     help="Post-stratify to population counts of cells of disclosed questions "
                          "(CSV: the questions' columns, then total)."),
        click.option("--rake", "rake_path", type=_FILE,
                     help="Rake to population margins of disclosed questions (CSV: "
                          "question,value,total; one margin per question)."),
        click.option("--calibrate", "calibrate_path", type=_FILE,
                     help="Linear (GREG) calibration to population totals of disclosed "
                          "questions (CSV: question,value,total)."),
        click.option("--bounds", metavar="LO,HI",
                     help="With --calibrate: keep every g-weight (calibrated / design weight) "
                          "within [LO, HI], e.g. 0.5,2."),
        click.option("--max-iterations", type=click.IntRange(1, 10_000),
                     help="With --rake or bounded --calibrate: iterations before giving up "
                          "(default 100 and 50)."),
        click.option("--variance", type=click.Choice(VARIANCES),
                     help="Design-based variance: linearized (default), or replicate weights "
                          "jk1 (unstratified), jkn (stratified jackknife), bootstrap; for a "
                          "two-server survey (--batch all), groups: the delete-a-group "
                          "jackknife over the invitation codes' random groups."),
        click.option("--replicates", type=click.IntRange(2, 10_000), default=80,
                     show_default=True, help="With --variance bootstrap: how many replicates."),
        click.option("--lonely-psu", type=click.Choice(list(LONELY_PSU)),
                     help="What a stratum with a single PSU contributes to the variance (R's "
                          "survey.lonely.psu; default fail)."),
    )):
        command = option(command)
    return command


DESIGN_PARAMETERS = ("weighted", "frame_path", "frame_key", "poststratify_path", "rake_path",
                     "calibrate_path", "bounds", "max_iterations", "variance", "replicates",
                     "lonely_psu")


def options_from(params: dict[str, Any]) -> Any:
    """The `DesignOptions` these parameters ask for, or None (not design-based). Pops the
    design parameters from `params`; usage errors are click's."""
    p = {name: params.pop(name) for name in DESIGN_PARAMETERS}
    calibrations = [(m, p[f"{m}_path"]) for m in ("poststratify", "rake", "calibrate")
                    if p[f"{m}_path"] is not None]
    if len(calibrations) > 1:
        raise click.UsageError("give one of --poststratify, --rake or --calibrate")
    if p["bounds"] is not None and not (calibrations and calibrations[0][0] == "calibrate"):
        raise click.UsageError("--bounds goes with --calibrate")
    if p["max_iterations"] is not None and not calibrations:
        raise click.UsageError("--max-iterations goes with --rake or --calibrate")
    if (p["frame_path"] is None) != (p["frame_key"] is None):
        raise click.UsageError("--frame FILE and --key QUESTION go together")
    if p["frame_path"] is not None and p["weighted"]:
        raise click.UsageError("--weighted takes the invitation codes' design; --frame another "
                               "one: give one of them")
    asked = (p["weighted"] or p["frame_path"] is not None or calibrations
             or p["variance"] is not None or p["lonely_psu"] is not None)
    if not asked:
        if p["replicates"] != 80:
            raise click.UsageError("--replicates goes with --variance bootstrap")
        return None
    from ..design.estimates import DesignOptions
    from ..margins import Calibration, parse_bounds

    calibration = None
    if calibrations:
        method, path = calibrations[0]
        calibration = Calibration(method, path, parse_bounds(p["bounds"]), p["max_iterations"])
    return DesignOptions(frame=p["frame_path"], key=p["frame_key"], calibration=calibration,
                         variance=p["variance"] or "linearized",
                         lonely_psu=p["lonely_psu"] or "fail", replicates=p["replicates"],
                         weighted=bool(p["weighted"]))
