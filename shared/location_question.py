"""The `location` question type: a designer's grid, its regions and background, and parsing.

    [[questions]]
    id = "home"
    type = "location"
    text = "Where do you live?"
    epsilon_geo = 0.5                          # per km
    grid = { rows = 20, cols = 20, cell_km = 1.0 }
    regions = { centre = ["8-13,8-13"], river = ["1-20,10", "5,11"] }   # optional
    background = "data:image/png;base64,..."   # optional, shipped inside the signed survey
    # epsilon = 7.0                            # optional: the plain ε; default: the exact one

Cells are 1-based "row,col" (row 1 at the top); a region is a list of cells and rectangles
"r1-r2,c1-c2" (any mix), stored canonically as its cells in index order. The background image
travels inside the signed survey (a PNG, JPEG or WebP data: URL): the page never loads tiles
from another origin. `epsilon`, the plain LDP ε the ledger books, defaults to the exact largest
log-ratio of the certified channel (rounded up to a float); a given one must cover it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .background_image import check_background
from .errors import PrivacyCheckError, SurveyError
from .question_types import fields
from .question_types.base import Definition

MAX_SIDE = 64
MAX_CELLS = 1024
# Location cells in all questions of a survey together: each grid's certification is
# ~0.1-0.5 s of a device's time (bench/bench_location.py).
MAX_SURVEY_CELLS = 4096
MAX_REGIONS = 64
MAX_CELL_KM = 1000.0
_CELL = re.compile(r"^(\d+)(?:-(\d+))?,(\d+)(?:-(\d+))?$")
LOCATION_KEYS = {"epsilon_geo", "grid", "regions", "background"}


@dataclass(frozen=True)
class LocationGrid:
    rows: int
    cols: int
    cell_km: float
    epsilon_geo: float
    background: str | None = None

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def labels(self) -> tuple[str, ...]:
        return tuple(f"{r},{c}" for r in range(1, self.rows + 1) for c in range(1, self.cols + 1))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"epsilon_geo": self.epsilon_geo,
                             "grid": {"rows": self.rows, "cols": self.cols,
                                      "cell_km": self.cell_km}}
        if self.background is not None:
            d["background"] = self.background
        return d


def parse_location_question(definition: Definition) -> Any:
    """The Question for a location question's table (id and text already checked, the
    location unit's `parse`)."""
    from dataclasses import replace

    from .mechanisms.location import GeoExp

    data, where = definition.data, definition.where
    optional = fields.optional(data, where)
    for key in ("instantaneous_epsilon", "mechanism_choice"):
        if data.get(key) is not None:
            raise SurveyError(f"{where}.{key}", "does not apply to a location question")
    mechanism = data.get("mechanism", "auto")
    if mechanism not in ("auto", GeoExp.name):
        raise SurveyError(f"{where}.mechanism", f"a location question uses {GeoExp.name!r} "
                          f"(or auto), not {mechanism!r}")
    grid = _grid(data, where)
    labels = grid.labels()
    regions = _regions(data.get("regions", {}), grid, f"{where}.regions")
    claimed = data.get("epsilon")
    question = definition.build(id=definition.id, text=definition.text, type=data["type"],
                                epsilon=1.0, mechanism=GeoExp.name, options=labels,
                                groups=regions, optional=optional, location=grid)
    try:
        probe = GeoExp(GeoExp.max_epsilon, labels, rows=grid.rows, cols=grid.cols,
                       cell_km=grid.cell_km, epsilon_geo=grid.epsilon_geo)
    except PrivacyCheckError as exc:  # the plain ε is past any accepted, or no channel at all
        realized = exc.details.get("realized") if isinstance(exc.details, dict) else None
        problem = (f"this grid's plain ε would be {realized:.4g}, above the largest accepted "
                   f"{GeoExp.max_epsilon:g}: lower epsilon_geo, the cell size or the grid"
                   if realized is not None else exc.message)
        raise SurveyError(f"{where}.epsilon_geo", problem) from None
    exact = probe.realized_epsilon()
    epsilon = _covering_float(probe) if claimed is None else _claimed(claimed, where)
    if not probe._loss.within(epsilon):  # type: ignore[union-attr]
        raise SurveyError(f"{where}.epsilon", f"{epsilon!r} is below this grid's exact plain "
                          f"ε {exact:.10g} (omit it to use the exact value)")
    if epsilon < GeoExp.min_epsilon:
        raise SurveyError(f"{where}.epsilon_geo", f"the plain ε {exact:.3g} of this grid is "
                          f"below {GeoExp.min_epsilon:g}: raise epsilon_geo or the cell size")
    question = replace(question, epsilon=epsilon)
    params = GeoExp.from_question(question).params()
    given = data.get("params")
    if given is not None and given != {} and given != params:
        raise SurveyError(f"{where}.params", f"do not match this grid at epsilon_geo "
                          f"{grid.epsilon_geo!r}: expected {params}")
    return replace(question, params=params)


def _covering_float(mechanism: Any) -> float:
    """The exact plain ε rounded up to 6 significant digits (a short number in the survey)."""
    eps = float(f"{mechanism.realized_epsilon():.6g}")
    step = 10.0 ** (math.floor(math.log10(eps)) - 5)  # one unit in the 6th digit
    while not mechanism._loss.within(eps):
        eps = float(f"{eps + step:.6g}")
    return eps


def _claimed(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(float(value)) and value > 0):
        raise SurveyError(f"{where}.epsilon", "must be a finite number > 0")
    return float(value)


def _number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SurveyError(where, "must be a number")
    x = float(value)
    if not (math.isfinite(x) and low < x <= high):
        raise SurveyError(where, f"must be a number above {low:g} and at most {high:g}")
    return x


def _grid(data: Mapping[str, Any], where: str) -> LocationGrid:
    from .mechanisms.location import GeoExp

    raw = data.get("grid")
    if not isinstance(raw, Mapping):
        raise SurveyError(f"{where}.grid", "must be a table {rows, cols, cell_km}")
    unknown = sorted(str(k) for k in raw if k not in ("rows", "cols", "cell_km"))
    if unknown:
        raise SurveyError(f"{where}.grid.{unknown[0]}", "unknown key")
    sides = []
    for key in ("rows", "cols"):
        v = raw.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_SIDE:
            raise SurveyError(f"{where}.grid.{key}", f"must be an integer from 1 to {MAX_SIDE}")
        sides.append(v)
    if not 2 <= sides[0] * sides[1] <= MAX_CELLS:
        raise SurveyError(f"{where}.grid", f"needs 2 to {MAX_CELLS} cells, got "
                          f"{sides[0] * sides[1]}")
    cell_km = _number(raw.get("cell_km"), f"{where}.grid.cell_km", 0.0, MAX_CELL_KM)
    epsilon_geo = _number(data.get("epsilon_geo"), f"{where}.epsilon_geo",
                          0.0, GeoExp.max_epsilon)
    return LocationGrid(sides[0], sides[1], cell_km, epsilon_geo,
                        _background(data.get("background"), f"{where}.background"))


def _background(value: Any, where: str) -> str | None:
    return None if value is None else check_background(value, where)


def _regions(value: Any, grid: LocationGrid, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        raise SurveyError(where, 'must be a table of name = ["row,col", "r1-r2,c1-c2", ...]')
    if len(value) > MAX_REGIONS:
        raise SurveyError(where, f"at most {MAX_REGIONS} regions")
    out: dict[str, tuple[str, ...]] = {}
    for name, cells in value.items():
        at = f"{where}.{name}"
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise SurveyError(at, "region name must be a non-empty string")
        if not isinstance(cells, list) or not cells:
            raise SurveyError(at, 'must be a non-empty list of "row,col" or "r1-r2,c1-c2"')
        members: set[int] = set()
        for spec in cells:
            members |= _cells(spec, grid, at)
        out[name] = tuple(f"{i // grid.cols + 1},{i % grid.cols + 1}" for i in sorted(members))
    return out


def _cells(spec: Any, grid: LocationGrid, where: str) -> set[int]:
    match = _CELL.match(spec.replace(" ", "")) if isinstance(spec, str) else None
    if not match:
        raise SurveyError(where, f'{spec!r} is not "row,col" or "r1-r2,c1-c2" (1-based)')
    r1, r2, c1, c2 = (int(g) if g is not None else None for g in match.groups())
    assert r1 is not None and c1 is not None
    r2, c2 = r2 or r1, c2 or c1
    if not (1 <= r1 <= r2 <= grid.rows and 1 <= c1 <= c2 <= grid.cols):
        raise SurveyError(where, f"{spec!r} is outside the {grid.rows} x {grid.cols} grid")
    return {(r - 1) * grid.cols + (c - 1) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)}
