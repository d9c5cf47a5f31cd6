"""`ldpsurvey report --batch all` with design options: a two-server survey's design-based
estimates from every collected batch of one version (docs/weights.md, "Two-server surveys").

The leader batches each cell (the invitation code's stratum) and each random group apart; this
module reads, from the leader with the analyst token, the batch listing, collects every batch
that is aggregated (each is collected once; a collected one is served again unchanged), the
survey version's manifest and the codes' designs (GET .../designs.jsonl: the weight of each
cell and whether the codes name PSUs), and estimates with shared/two_server/design.py. Which
design options mean what here:

- `--weighted`: each cell weighted by its codes' design weight (the same for every code of a
  cell: refused otherwise, since a batch releases one total and every respondent in it counts
  alike);
- `--poststratify CELLS.csv` (`stratum,total`): each cell to its population count;
- `--variance groups`: the delete-a-group jackknife over the random groups (t intervals with
  G − 1 degrees of freedom); `linearized` (the default): the per-cell formula, refused when
  the codes name PSUs (clusters) it would take for independent respondents.
Everything else a design option can do in the LDP mode needs a report per respondent and is
refused with the reason.
"""

from __future__ import annotations

import csv
import io
import math
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ldpsurvey.shared.design_frame import MAX_POPULATION
from ldpsurvey.shared.errors import AnalysisError
from ldpsurvey.shared.survey import Survey
from ldpsurvey.shared.two_server.design import FORMULA, GROUPS, BatchDesign, estimate_batches
from ldpsurvey.shared.two_server.results import CollectedBatch

from ..remote import RemoteError, request_json, request_lines

READY = ("aggregated", "collected")
MAX_CELLS = 10_000
NEEDS_A_REPORT = ("needs a report per respondent, and a two-server survey releases one noisy "
                  "total per batch")


def batch_design(options: Any, designs: Sequence[Mapping[str, Any]],
                 read_totals: Callable[[Path], dict[str, float]] | None = None) -> BatchDesign:
    """The `BatchDesign` the report's design options ask for, from the codes' designs
    (designs.jsonl lines), or AnalysisError naming what cannot be done and why."""
    if options.frame is not None:
        raise AnalysisError("--frame/--key joins a frame by a disclosed answer, and a "
                            "two-server survey has no disclosed question: put the design on "
                            "the invitation codes (invites create --design)")
    if options.lonely_psu != "fail":
        raise AnalysisError("--lonely-psu is for the linearized variance over PSUs; a "
                            "two-server survey's variance is per cell or by random groups")
    if options.variance not in ("linearized", GROUPS):
        raise AnalysisError(f"--variance {options.variance} builds replicate weights, which "
                            f"{NEEDS_A_REPORT}: use --variance groups (the delete-a-group "
                            "jackknife over the codes' random groups)")
    calibration = options.calibration
    totals = weights = None
    if calibration is not None:
        if calibration.method != "poststratify":
            raise AnalysisError(f"--{calibration.method} {NEEDS_A_REPORT}: its cells are the "
                                "invitation codes' strata, one variable, so post-stratify "
                                "(--poststratify CELLS.csv with columns stratum,total)")
        totals = (read_totals or read_cell_totals)(calibration.path)
    elif getattr(options, "weighted", False):
        weights = cell_weights(designs)
    clustered = any(d.get("psu") is not None for d in designs)
    return BatchDesign(totals=totals, weights=weights,
                       variance=GROUPS if options.variance == GROUPS else FORMULA,
                       clustered=clustered)


def cell_weights(designs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """stratum -> the design weight of its codes, the same for each (or AnalysisError)."""
    if not designs:
        raise AnalysisError("--weighted: this survey's invitation codes carry no design "
                            "(invites create --design FRAME.csv)")
    found: dict[str, float] = {}
    for d in designs:
        cell = d.get("stratum")
        if cell is None:
            weights = {float(x["weight"]) for x in designs}
            if len(weights) > 1:
                raise AnalysisError("--weighted: the codes' weights differ and they carry no "
                                    "stratum; a two-server batch releases one total, so every "
                                    "respondent in it counts alike: make the weighting "
                                    "classes the frame's strata (one weight per stratum)")
            return {}
        weight = float(d["weight"])
        if found.setdefault(str(cell), weight) != weight:
            raise AnalysisError(f"--weighted: stratum {cell!r} has codes of weights "
                                f"{found[str(cell)]:g} and {weight:g}; a two-server batch "
                                "releases one total per cell, so every respondent of a cell "
                                "counts alike: make the weighting classes the frame's strata "
                                "(one weight per stratum)")
    return found


def read_cell_totals(path: Path) -> dict[str, float]:
    """A post-stratification file of the codes' cells: columns `stratum,total`."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnalysisError(f"cannot read {path}: {exc}") from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise AnalysisError(f"{path}: not valid CSV ({exc})") from None
    if not rows or [c.strip() for c in rows[0]] != ["stratum", "total"]:
        raise AnalysisError(f"{path}: a two-server survey's cells are the invitation codes' "
                            "strata: the header must be stratum,total")
    totals: dict[str, float] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 2:
            raise AnalysisError(f"{path}, line {line}: expected 2 fields, got {len(row)}")
        cell, raw = row[0].strip(), row[1].strip()
        try:
            total = float(raw)
        except ValueError:
            raise AnalysisError(f"{path}, line {line}: total {raw!r} is not a number") \
                from None
        if not (math.isfinite(total) and 0 < total <= MAX_POPULATION):
            raise AnalysisError(f"{path}, line {line}: total {raw[:40]!r} must be a number > 0 "
                                f"and at most {MAX_POPULATION:g}")
        if cell in totals:
            raise AnalysisError(f"{path}, line {line}: stratum {cell!r} is listed twice")
        totals[cell] = total
        if len(totals) > MAX_CELLS:
            raise AnalysisError(f"{path}: more than {MAX_CELLS:,} cells")
    if not totals:
        raise AnalysisError(f"{path}: no cell")
    return totals


class LeaderBatches:
    """A two-server survey's batches, manifest and designs on the leader (analyst token)."""

    def __init__(self, server_url: str, survey_id: str, token: str, timeout: float) -> None:
        base = server_url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise AnalysisError(f"server URL must start with http:// or https://: {server_url}")
        self.base, self.token, self.timeout = base, token, timeout
        self.sid = urllib.parse.quote(survey_id, safe="")

    def _json(self, path: str, body: bytes | None = None, token: bool = True) -> Any:
        try:
            return request_json(f"{self.base}/api/surveys/{self.sid}{path}", body=body,
                                token=self.token if token else None,
                                timeout=self.timeout)[1]
        except RemoteError as exc:
            raise AnalysisError(exc.message) from None

    def listing(self) -> dict[str, Any]:
        return self._json("/two-server/batches")  # type: ignore[no-any-return]

    def collect(self, version: int | None) -> tuple[int, list[CollectedBatch], int]:
        """(version, its ready batches collected, uploads still waiting for a batch)."""
        listing = self.listing()
        ready = [b for b in listing.get("batches", []) if b.get("state") in READY]
        versions = sorted({int(b["version"]) for b in ready})
        if not versions:
            raise AnalysisError("the survey has no aggregated batch yet: run `ldpsurvey "
                                "batches --aggregate` (a batch forms once a cell's group has "
                                "min_batch_size uploads)")
        chosen = versions[-1] if version is None else int(version)
        if chosen not in versions:
            raise AnalysisError(f"version {chosen} has no aggregated batch (versions with "
                                f"batches: {', '.join(map(str, versions))})")
        batches = []
        for b in ready:
            if int(b["version"]) != chosen:
                continue
            bid = urllib.parse.quote(str(b["batch_id"]), safe="")
            doc = self._json(f"/two-server/batches/{bid}/collect", body=b"{}")
            try:
                batches.append(CollectedBatch.from_dict(doc))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise AnalysisError(f"the leader's collected batch does not parse: {exc}") \
                    from None
        return chosen, batches, int(listing.get("waiting_uploads", 0) or 0)

    def survey(self, version: int) -> Survey:
        doc = self._json(f"?version={int(version)}", token=False)
        try:
            return Survey.from_dict(doc["survey"])
        except (KeyError, TypeError) as exc:
            raise AnalysisError(f"the leader's survey document is malformed: {exc}") from None

    def designs(self) -> list[dict[str, Any]]:
        try:
            return [dict(line) for line in request_lines(
                f"{self.base}/api/surveys/{self.sid}/designs.jsonl", token=self.token,
                timeout=self.timeout)]
        except RemoteError as exc:
            raise AnalysisError(exc.message) from None


def design_document(leader: LeaderBatches, options: Any, version: int | None,
                    confidence: float) -> tuple[Survey, dict[str, Any]]:
    """The design-based estimate document of a two-server survey version's batches."""
    chosen, batches, waiting = leader.collect(version)
    survey = leader.survey(chosen)
    design = batch_design(options, leader.designs())
    document = estimate_batches(survey, batches, design, confidence)
    if waiting:
        document["design"]["waiting_uploads"] = waiting
    return survey, document


def two_server_design_text(server_url: str, survey_id: str, token: str, version: int | None,
                           options: Any, fmt: str, confidence: float, timeout: float,
                           lang: Any = None) -> str:
    """The design-based report of a two-server survey in one format (labelled in `lang`, a
    reports.language.LanguageRequest, when given)."""
    from ..reports.two_server import TwoServerReport, render_two_server

    leader = LeaderBatches(server_url, survey_id, token, timeout)
    survey, document = design_document(leader, options, version, confidence)
    report = TwoServerReport(survey=survey.to_dict(), estimates=document)
    return render_two_server(report if lang is None else lang.report(report), fmt)


__all__ = ["LeaderBatches", "batch_design", "cell_weights", "design_document",
           "read_cell_totals", "two_server_design_text"]
