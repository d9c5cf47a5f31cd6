"""What the import says when it cannot import: the form as a whole (XlsFormError), rows
(ImportRefused, a RowProblem each, with the reason and the nearest supported alternative),
and one row's refusal inside the mapping (Refusal, which the walk turns into a RowProblem).

Two kinds of row problems: "unsupported" (valid XLSForm that ldpsurvey cannot collect as
written: free text, dates, repeats, an integer without a range, an optional follow-up of a
randomized answer, ...) and "fix" (the row is wrong as written, or so are ldpsurvey's own
columns on it: no ε, an ε its mechanism cannot take, a condition naming a question the form
does not have, a row whose condition reads a row that needs fixing, ...). Without
`skip_unsupported` any row problem stops the import; with it, every problem row is left out
and listed, the rows that need the designer's fix first, under their own heading and never
quietly (the CLI also warns about them on stderr). Every problem is kept (none is cut off at
a count): `ImportRefused` and `ImportResult.left_out` hold them all, the rows that need fixing
first.

A third kind, "check", is no problem that leaves a row out: a row wrong in a way ODK itself
runs without complaint (a condition or an exclusivity naming a choice the list does not have,
an exclusivity whose `and` binds before its `or`, a choice_filter on a row without choices)
is imported as ODK runs it, and listed (`ImportResult.to_check`) under its own heading for the
designer to check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ldpsurvey.shared.errors import LdpSurveyError

UNSUPPORTED, FIX = "unsupported", "fix"
# A row imported as ODK runs it though the form is wrong there (a condition or exclusivity
# naming a choice the list lacks, an exclusivity whose 'and' binds before its 'or'): kept, and
# listed for the designer to check, never quietly.
CHECK = "check"
MAX_QUOTED = 80  # characters of a cell quoted in a message (a long one is cut, said with ...)


class XlsFormError(LdpSurveyError):
    """The form as a whole cannot be imported: unreadable, refused by pyxform, or settings
    that do not map (the message says which and what to do)."""

    code = "invalid_xlsform"
    # rows found, before the form was refused, that would be imported as ODK runs them (kind
    # CHECK, in the form's order): said with the refusal, so the designer sees every one at
    # once (set by import_xlsform; none for a form refused before its rows are read)
    checks: tuple[RowProblem, ...] = ()


@dataclass(frozen=True)
class RowProblem:
    """One survey-sheet row that cannot be imported as it is."""

    row: int | None  # survey sheet row, the header being row 1 (None: a generated row)
    name: str
    type: str  # the row's XLSForm type as written
    reason: str
    alternative: str
    kind: str = UNSUPPORTED  # or FIX: the row needs the designer's fix
    topic: str = ""  # what kind of row or feature, for counts ("free text", "repeats", ...)

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row is not None else "a row pyxform added"
        name = f"{self.name}, " if self.name else ""
        return f"{where} ({name}{self.type}): {self.reason}; {self.alternative}"


class ImportRefused(LdpSurveyError):
    """Rows of the form that cannot be imported (`problems`, every one, each with its row:
    the rows that need fixing first, then the others in the form's order)."""

    code = "xlsform_refused"
    checks: tuple[RowProblem, ...] = ()  # as XlsFormError.checks

    def __init__(self, problems: Sequence[RowProblem], nothing_left: bool = False) -> None:
        ordered = needs_fixing_first(problems)
        head = "no question can be imported" if nothing_left else _summary(ordered)
        super().__init__(head + ": " + "; ".join(map(str, ordered)),
                         [p.__dict__ for p in ordered])
        self.problems = ordered
        self.nothing_left = nothing_left  # every row is left out (--skip-unsupported)


def needs_fixing_first(problems: Sequence[RowProblem]) -> tuple[RowProblem, ...]:
    """The rows that need the designer's fix, then the ones that can only be left out, each
    in the form's order (rows pyxform added last)."""
    ordered = sorted(problems, key=lambda p: (p.kind != FIX, p.row is None, p.row or 0))
    return tuple(ordered)


def topics(problems: Sequence[RowProblem]) -> list[tuple[str, int]]:
    """(topic, number of rows), most rows first: what the rows left out are."""
    return Counter(p.topic or p.type for p in problems).most_common()


def _summary(problems: Sequence[RowProblem]) -> str:
    """How many rows cannot be collected privately and how many need fixing, and the way
    to import the rest."""
    unsupported = sum(p.kind == UNSUPPORTED for p in problems)
    to_fix = len(problems) - unsupported
    what = []
    if unsupported:
        what.append(f"{unsupported} row(s) cannot be collected privately")
    if to_fix:
        what.append(f"{to_fix} row(s) need fixing")
    return " and ".join(what) + " (--skip-unsupported imports the rest, leaving them out)"


def refuse_rows(problems: Sequence[RowProblem], skip_unsupported: bool) -> None:
    """ImportRefused (with every problem, however many) unless `skip_unsupported` leaves the
    problem rows out (those that need fixing too, listed first and warned about)."""
    if problems and not skip_unsupported:
        raise ImportRefused(problems)


class Refusal(Exception):
    """One row refused by the mapping: its kind, reason and alternative."""

    def __init__(self, kind: str, reason: str, alternative: str, topic: str = "") -> None:
        super().__init__(reason)
        self.kind, self.reason, self.alternative = kind, reason, alternative
        self.topic = topic


def quoted(value: Any) -> str:
    """A cell's text quoted for a message: its repr, cut at MAX_QUOTED characters (a
    15,000-character condition is named by its start, not printed whole)."""
    text = str(value)
    return repr(text) if len(text) <= MAX_QUOTED else repr(text[:MAX_QUOTED - 3]) + "..."
