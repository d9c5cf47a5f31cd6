"""A sampling frame file: per sampled unit its design (weight, stratum, PSU, fpc), from CSV.

The operator of a probability survey knows each sampled unit's design: its sampling weight
(1 / its selection probability), the stratum it was drawn in, its primary sampling unit (the
cluster: a school, a census block) and the stratum's finite-population correction. A frame file
is a CSV with a header and one row per unit:

    id,weight,stratum,psu,fpc
    unit-0001,250.0,north,school-17,40
    unit-0002,250.0,north,school-17,40

- `id` (required): the unit's identifier. With `ldpsurvey invites create --design` it is the
  operator's own label, printed back next to the unit's invitation code and never stored; with
  `--frame FILE --key QUESTION` at analysis it is matched to each submission's disclosed answer
  to QUESTION.
- `weight` (required): a finite number > 0.
- `stratum`, `psu` (optional): labels. Without `stratum` the sample is one stratum; without
  `psu` every unit is its own PSU. PSU labels are nested in strata: school-17 of "north" and
  school-17 of "south" are two PSUs (R: `svydesign(..., nest = TRUE)`).
- `fpc` (optional): per stratum, the same on every row of it: the number of PSUs in the
  stratum's population (at least the PSUs sampled), or, when every fpc of the frame is at most
  1, the fraction of the stratum's PSUs that was sampled: R's `svydesign(fpc = ...)` reads it
  the same way (all sizes, or all fractions).

Anything else is refused with one line naming the file, the line and the problem: another
column, a missing, non-numeric, zero, negative, infinite or above-MAX_WEIGHT weight, a
duplicate id, an fpc that differs within a stratum, mixes sizes and fractions, counts fewer PSUs
than were sampled or more than MAX_POPULATION, and a stratum with one PSU (its variance cannot
be estimated: see `LONELY_PSU` for what R's `survey.lonely.psu` offers instead).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import LdpSurveyError

ID, WEIGHT, STRATUM, PSU, FPC = "id", "weight", "stratum", "psu", "fpc"
COLUMNS = (ID, WEIGHT, STRATUM, PSU, FPC)
REQUIRED = (ID, WEIGHT)
MAX_ROWS = 1_000_000
MAX_LABEL = 200  # characters of an id, stratum or PSU label
# A weight (1/π: how many units a unit stands for) and a stratum's population of PSUs are at
# most 10^15: more than any population, and far from float64's end, where the estimators' sums
# and their squares overflow to inf/nan (weights of 1e308 printed estimates of 0.0%).
# Design.build (shared/design/sample.py) holds every design to the same bounds.
MAX_WEIGHT = 1e15
MAX_POPULATION = 1e15

# R's options(survey.lonely.psu = ...): what a stratum with a single PSU contributes to the
# variance. The analyst commands take the same names (--lonely-psu).
LONELY_PSU: dict[str, str] = {
    "fail": "refuse (R's default): a single PSU has no variance within its stratum",
    "remove": "the stratum contributes nothing to the variance (R: \"remove\")",
    "adjust": "the lonely PSU is centred at the overall mean instead of its stratum's mean "
              "(conservative; R: \"adjust\")",
    "average": "the stratum gets the average variance contribution of the strata that have "
               "several PSUs (R: \"average\")",
    "certainty": "the lonely PSU was sampled with certainty: no sampling variance "
                 "(R: \"certainty\")",
}


class FrameError(LdpSurveyError):
    """A frame file that cannot be used: the message names the file, the line and the problem."""

    code = "invalid_frame"
    status = 422  # an HTTP edge answers 422, like the library's other input errors


@dataclass(frozen=True)
class FrameRow:
    """One sampled unit's design. `stratum`/`psu`/`fpc` are None when the frame has no such
    column (one stratum; each unit its own PSU; no finite-population correction)."""

    id: str
    weight: float
    stratum: str | None = None
    psu: str | None = None
    fpc: float | None = None
    line: int = 0  # where it came from, for messages


@dataclass(frozen=True)
class Frame:
    """A checked frame: its rows in file order and which design columns it has."""

    source: str
    columns: tuple[str, ...]
    rows: tuple[FrameRow, ...]

    @property
    def has_strata(self) -> bool:
        return STRATUM in self.columns

    @property
    def has_psus(self) -> bool:
        return PSU in self.columns

    @property
    def has_fpc(self) -> bool:
        return FPC in self.columns

    def by_id(self) -> dict[str, FrameRow]:
        return {row.id: row for row in self.rows}

    def describe(self) -> str:
        """One line: how many units, strata and PSUs."""
        strata = {r.stratum for r in self.rows}
        psus = {(r.stratum, r.psu if r.psu is not None else r.id) for r in self.rows}
        parts = [f"{len(self.rows):,} units"]
        if self.has_strata:
            parts.append(f"{len(strata):,} strata")
        if self.has_psus:
            parts.append(f"{len(psus):,} PSUs")
        if self.has_fpc:
            parts.append("finite-population correction")
        return ", ".join(parts)


def read_frame(path: str | Path, *, allow_lonely_psu: bool = False) -> Frame:
    """The checked frame in a CSV file; FrameError (one line) for anything wrong with it."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise FrameError(f"cannot read frame {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise FrameError(f"frame {name} is not UTF-8 text") from None
    return parse_frame(text, name, allow_lonely_psu=allow_lonely_psu)


def parse_frame(text: str, source: str = "frame", *,
                allow_lonely_psu: bool = False) -> Frame:
    """The checked frame in CSV text (see the module docstring)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise FrameError(f"{source}: empty; expected a header line with the columns "
                             f"{', '.join(COLUMNS)}")
        columns = _columns(header, source)
        rows = _rows(reader, columns, source)
    except csv.Error as exc:
        raise FrameError(f"{source} line {reader.line_num}: not valid CSV ({exc})") from None
    frame = Frame(source, tuple(c for c in COLUMNS if c in columns), tuple(rows))
    check_design(frame.rows, source, allow_lonely_psu=allow_lonely_psu)
    return frame


def _columns(header: Sequence[str], source: str) -> list[str]:
    columns = [h.strip() for h in header]
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise FrameError(f"{source}: unknown column(s) {', '.join(map(repr, unknown))}; a frame "
                         f"has {', '.join(REQUIRED)} and optionally {STRATUM}, {PSU}, {FPC}")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise FrameError(f"{source}: column {repeated[0]!r} appears twice")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise FrameError(f"{source}: no {missing[0]!r} column; a frame has "
                         f"{', '.join(REQUIRED)} and optionally {STRATUM}, {PSU}, {FPC}")
    return columns


def _rows(reader: Iterable[list[str]], columns: list[str], source: str) -> list[FrameRow]:
    rows: list[FrameRow] = []
    seen: dict[str, int] = {}
    line = 1
    for record in reader:
        line += 1
        if not any(cell.strip() for cell in record):
            continue  # a blank line (a trailing newline, say)
        if len(rows) >= MAX_ROWS:
            raise FrameError(f"{source}: more than {MAX_ROWS:,} units")
        if len(record) != len(columns):
            raise FrameError(f"{source} line {line}: {len(record)} fields, the header has "
                             f"{len(columns)}")
        cells = dict(zip(columns, (c.strip() for c in record), strict=True))
        unit = _label(cells[ID], ID, source, line)
        if unit in seen:
            raise FrameError(f"{source} line {line}: id {unit!r} is a duplicate of line "
                             f"{seen[unit]}; each unit is listed once")
        seen[unit] = line
        rows.append(FrameRow(
            id=unit, weight=_weight(cells[WEIGHT], source, line),
            stratum=_label(cells[STRATUM], STRATUM, source, line) if STRATUM in cells else None,
            psu=_label(cells[PSU], PSU, source, line) if PSU in cells else None,
            fpc=_fpc(cells[FPC], source, line) if FPC in cells else None,
            line=line))
    if not rows:
        raise FrameError(f"{source}: no units (only a header)")
    return rows


def _label(text: str, column: str, source: str, line: int) -> str:
    if not text:
        raise FrameError(f"{source} line {line}: {column} is missing")
    if len(text) > MAX_LABEL:
        raise FrameError(f"{source} line {line}: {column} is longer than {MAX_LABEL} characters")
    return text


def _number(text: str, column: str, source: str, line: int) -> float:
    if not text:
        raise FrameError(f"{source} line {line}: {column} is missing")
    try:
        value = float(text)
    except ValueError:
        raise FrameError(f"{source} line {line}: {column} {text[:40]!r} is not a number") \
            from None
    if not math.isfinite(value):
        raise FrameError(f"{source} line {line}: {column} must be a finite number, got {text!r}")
    return value


def _weight(text: str, source: str, line: int) -> float:
    value = _number(text, WEIGHT, source, line)
    if value == 0:
        raise FrameError(f"{source} line {line}: weight is 0; a sampled unit stands for at "
                         "least itself (weight > 0): leave units out of the frame instead")
    if value < 0:
        raise FrameError(f"{source} line {line}: weight {text} is negative; weights are > 0")
    if value > MAX_WEIGHT:
        raise FrameError(f"{source} line {line}: weight {text} is above {MAX_WEIGHT:g}; a weight "
                         "is how many units the unit stands for (1 / its selection probability)")
    return value


def _fpc(text: str, source: str, line: int) -> float:
    value = _number(text, FPC, source, line)
    if value <= 0:
        raise FrameError(f"{source} line {line}: fpc must be > 0 (a population count of PSUs, "
                         f"or a sampling fraction in (0, 1]), got {text}")
    if value > MAX_POPULATION:
        raise FrameError(f"{source} line {line}: fpc {text} is above {MAX_POPULATION:g} PSUs")
    return value


def check_design(rows: Sequence[FrameRow], source: str, *, allow_lonely_psu: bool = False,
                 stored: Sequence[tuple[str | None, str | None, float | None, int]] = ()
                 ) -> None:
    """The checks across rows: one fpc per stratum, at least as many population PSUs as sampled
    ones, and (unless allowed) at least two PSUs per stratum. `stored` summarizes design rows
    stored before (invitations created earlier), checked together with `rows`: (stratum, PSU
    label or None for units that are their own PSU, fpc, how many units)."""
    fpcs: dict[str | None, tuple[float | None, int]] = {}  # stratum -> (fpc, line; 0: stored)
    named: dict[str | None, set[str]] = {}  # stratum -> PSU labels
    own: dict[str | None, int] = {}  # stratum -> units that are their own PSU
    for stratum, psu, fpc, count in stored:
        fpcs.setdefault(stratum, (fpc, 0))
        named.setdefault(stratum, set())
        if psu is None:
            own[stratum] = own.get(stratum, 0) + count
        else:
            named[stratum].add(psu)
    for row in rows:
        if row.stratum in fpcs:
            fpc, line = fpcs[row.stratum]
            if fpc != row.fpc:
                where = f"line {line}" if line else "the invitations created before"
                raise FrameError(f"{source} line {row.line}: fpc {_show(row.fpc)} differs from "
                                 f"{_show(fpc)} of stratum {_stratum(row.stratum)} ({where}); "
                                 "the fpc is one number per stratum")
        else:
            fpcs[row.stratum] = (row.fpc, row.line)
        if row.psu is None:
            own[row.stratum] = own.get(row.stratum, 0) + 1
        else:
            named.setdefault(row.stratum, set()).add(row.psu)
    given = [(s, f) for s, (f, _) in fpcs.items() if f is not None]
    sizes = any(f > 1 for _, f in given)  # R: all at most 1 are fractions, else sizes
    fraction = next(((s, f) for s, f in given if f < 1), None) if sizes else None
    if fraction is not None:
        raise FrameError(f"{source}: the fpc of stratum {_stratum(fraction[0])} is a fraction "
                         f"({fraction[1]:g}) where other strata give population sizes: give "
                         "all as the number of PSUs in the stratum's population, or all as "
                         "sampled fractions (at most 1)")
    for stratum, (fpc, _) in fpcs.items():
        n_psus = len(named.get(stratum, ())) + own.get(stratum, 0)
        if sizes and fpc is not None and fpc < n_psus:
            raise FrameError(f"{source}: stratum {_stratum(stratum)} has {n_psus:,} PSUs "
                             f"sampled but an fpc of {fpc:g} PSUs in its population; the fpc "
                             "counts the population's PSUs (or, when every fpc is at most 1, "
                             "gives the sampled fractions)")
        if not sizes and fpc is not None and n_psus / fpc > MAX_POPULATION:
            raise FrameError(f"{source}: stratum {_stratum(stratum)} has {n_psus:,} PSUs "
                             f"sampled, a fraction {fpc:g} of a population above "
                             f"{MAX_POPULATION:g} PSUs; give the fraction sampled")
        if n_psus == 1 and not allow_lonely_psu:
            raise FrameError(f"{source}: stratum {_stratum(stratum)} has a single PSU, whose "
                             "variance cannot be estimated; if that is the design, pass "
                             "--allow-lonely-psu and choose at analysis what it contributes "
                             f"(--lonely-psu {'|'.join(LONELY_PSU)}, R's survey.lonely.psu)")


def _show(fpc: float | None) -> str:
    return "(none)" if fpc is None else f"{fpc:g}"


def _stratum(stratum: str | None) -> str:
    return "(the only one)" if stratum is None else repr(stratum)
