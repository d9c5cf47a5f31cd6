"""How many rows of the form the import kept, of each XLSForm type, and how many it left out,
of each kind with the reason ("kept 150 of 710 rows: 80 select_one, ...; left out: 104 free
text (free text cannot be randomized), ..."): what a researcher checks first of a large form.

Every survey-sheet row is counted once: kept (a question), left out (by topic, the reasons
of ImportResult.left_out), a note (the introduction, or not shown), outside the selection
(--group, --marked), or the rows that only structure the form (begin/end group, end repeat).
The select_multiple rows kept with their exclusivity constraint (as `exclusive` options), or
without it (a two-server survey has none yet), and the rows kept with a piped text (`${name}`),
are said after the kept rows, and so are the rows imported as ODK runs them (to check)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import RowProblem
from .refusals import TOPICS
from .selection import TOPIC as OUTSIDE

EXCLUSIVITY = "exclusivity (not imported yet)"
# The kinds whose reason is that of their type (said once in the counts), and the kinds
# whose rows each say it their own way (said here once for all).
_OF_A_TYPE = frozenset(TOPICS.values())
_SAID_ONCE = {"integers without a range": "an integer without a range on both sides cannot "
              "be randomized",
              # each row names its file: said once for all (--media DIR reads the files)
              "options from outside the form": "its options come from a file or an external "
              "list, not the signed survey (--media reads a select_one_from_file's file)"}


@dataclass(frozen=True)
class RowCounts:
    """The form's rows: kept by XLSForm type, left out by kind (with the reason)."""

    total: int
    kept: tuple[tuple[str, int], ...]  # (XLSForm type, rows), most first
    left_out: tuple[tuple[str, int, str], ...]  # (kind, rows, reason or ''), most first
    exclusive: int = 0  # kept with their exclusivity constraint as exclusive options
    exclusive_pending: int = 0  # kept without it (two-server: no exclusive options yet)
    piped: int = 0  # kept with a piped text (`${name}`: an earlier answer, shown on the device)
    to_check: int = 0  # rows imported as ODK runs them though the form is wrong there
    carried: int = 0  # calculations kept as values the invitations carry (carried = true)

    @property
    def kept_rows(self) -> int:
        return sum(n for _, n in self.kept)

    def summary(self) -> str:
        """One line: kept N of M rows by type; left out by kind, with the reason."""
        kept = ", ".join(f"{n} {kind}" for kind, n in self.kept) or "none"
        left = ", ".join(f"{n} {kind}" + (f" ({why})" if why else "")
                         for kind, n, why in self.left_out)
        line = f"kept {self.kept_rows} of {self.total} rows: {kept}"
        said = []
        if self.exclusive:
            said.append(f"{self.exclusive} select_multiple of them with exclusive options")
        if self.exclusive_pending:
            said.append(f"{self.exclusive_pending} select_multiple of them without their "
                        f"exclusivity constraint: {EXCLUSIVITY}")
        if self.piped:
            said.append(f"{self.piped} of them with a piped text (an earlier answer shown on "
                        "the device)")
        if self.carried:
            said.append(f"{self.carried} calculate of them carried by each invitation from the "
                        "main survey's export, for the conditions that read them")
        if self.to_check:
            said.append(f"{self.to_check} row(s) imported as ODK runs them, to check")
        if said:
            line += f" ({'; '.join(said)})"
        return line + (f"; left out: {left}" if left else "")


def row_counts(total: int, kept_types: Iterable[str], left_out: Sequence[RowProblem],
               notes: int, intro: int, outside: int, exclusive: int = 0,
               exclusive_pending: int = 0, piped: int = 0, to_check: int = 0,
               carried: int = 0) -> RowCounts:
    """The counts of a form of `total` rows: the kept questions' XLSForm types as written
    (`select_one list` counts as select_one), the rows left out, the notes not shown and
    those that became the introduction, the rows outside the selection; the rest only
    structure the form."""
    kept = Counter(kind.split()[0] if kind.split() else kind for kind in kept_types)
    by_topic: dict[str, list[RowProblem]] = {}
    for problem in left_out:
        by_topic.setdefault(problem.topic or problem.type, []).append(problem)
    left = [(topic, len(ps), _reason(ps)) for topic, ps in by_topic.items()]
    if notes:
        left.append(("notes", notes, "display-only text between questions is not shown"))
    if intro:
        left.append(("notes before the first question", intro, "they became the survey's "
                     "introduction (description)"))
    if outside:
        left.append((OUTSIDE, outside, ""))
    structure = total - sum(kept.values()) - sum(n for _, n, _ in left)
    if structure:
        left.append(("group and repeat ends and display groups", structure,
                     "they only structure the form"))
    left.sort(key=lambda t: -t[1])
    return RowCounts(total, tuple(kept.most_common()), tuple(left), exclusive,
                     exclusive_pending, piped, to_check, carried)


def _reason(problems: Sequence[RowProblem]) -> str:
    """The reasons of a kind of row (free text, repeats, ...: one reason for every row of a
    type; free text's are a text row's and or_other's), most rows first; '' for a kind whose
    reasons are the rows' own (a condition, a constraint)."""
    if problems[0].topic in _SAID_ONCE:
        return _SAID_ONCE[problems[0].topic]
    if problems[0].topic not in _OF_A_TYPE:
        return ""
    return "; ".join(reason for reason, _ in Counter(p.reason for p in problems).most_common())
