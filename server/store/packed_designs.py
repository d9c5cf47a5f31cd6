"""A submission's design packed as bytes beside its columns (schema 8 / PostgreSQL 6; with its
label codes since schema 9 / PostgreSQL 7).

An invitation code's weight, fpc and random group, and the codes of its stratum and PSU labels,
are packed once when the code is made, and ingest copies the bytes to the submission with the
columns (the same INSERT or UPDATE), so a design-based report reads a page of them as one
joined blob with numpy instead of one Python float and one label per row and column. The
numbers are the stored doubles themselves (little-endian float64 weight and fpc, int64 random
group): no decimal text in between, so the arrays are exactly the columns'. The labels are
numbered per survey and kind (`design_labels`: 0, 1, ... in the order they were first stored;
-1: none) and packed big-endian int32, as PostgreSQL's `int4send` writes them, so the migration
that numbered the labels of stored codes packs them in SQL. A row without a design (no code, or
a code without one) keeps NULL; a row stored before schema 8 keeps NULL too, and its page is
read from the columns as before.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

_NUMBERS = struct.Struct("<ddq")
_CODES = struct.Struct(">ii")
ROW_BYTES = _NUMBERS.size + _CODES.size  # 32
# a page reads the columns' values, NULL as nan (weight, fpc) and 0 (random group); the nan is
# numpy's quiet one (np.nan's bytes), as the column path makes it
NAN = struct.unpack("<d", bytes.fromhex("000000000000f87f"))[0]
NO_LABEL = -1
# the packed bytes of a submission without a design, as the column path reads one
NO_DESIGN = _NUMBERS.pack(NAN, NAN, 0) + _CODES.pack(NO_LABEL, NO_LABEL)
LABEL_KINDS = ("stratum", "psu")


def pack_design(weight: float | None, fpc: float | None, group: int | None,
                stratum: int = NO_LABEL, psu: int = NO_LABEL) -> bytes | None:
    """A design's numbers and label codes packed (None: no design, i.e. no weight)."""
    if weight is None:
        return None
    return (_NUMBERS.pack(weight, NAN if fpc is None else fpc, 0 if group is None else group)
            + _CODES.pack(stratum, psu))


def with_label_codes(packed: bytes | None, stratum: str | None, stratum_code: int | None,
                     psu: str | None, psu_code: int | None) -> bytes | None:
    """A design packed before schema 9 (its numbers only) with its label codes appended: the
    SQLite migration's SQL function (`ldp_label_codes`; PostgreSQL's appends `int4send` in
    SQL). None, so that the row is read from its columns, when a label has no code."""
    if packed is None or len(packed) == ROW_BYTES:
        return packed
    if len(packed) != _NUMBERS.size or (stratum is not None and stratum_code is None) or (
            psu is not None and psu_code is None):
        return None
    return packed + _CODES.pack(NO_LABEL if stratum is None else stratum_code,
                                NO_LABEL if psu is None else psu_code)


class LabelNumbers:
    """A survey's stratum and PSU labels numbered (the `design_labels` rows): the codes known,
    and the labels numbered since (`new`, to be stored in the same transaction)."""

    def __init__(self, known: Iterable[tuple[str, int, str]] = ()) -> None:
        self._codes: dict[str, dict[str, int]] = {kind: {} for kind in LABEL_KINDS}
        self._next = dict.fromkeys(LABEL_KINDS, 0)
        for kind, code, label in known:
            self._codes[kind][label] = int(code)
            self._next[kind] = max(self._next[kind], int(code) + 1)
        self.new: list[tuple[str, int, str]] = []  # (kind, code, label)

    def code(self, kind: str, label: str | None) -> int:
        """The label's code (numbered now if new); NO_LABEL for none."""
        if label is None:
            return NO_LABEL
        codes = self._codes[kind]
        found = codes.get(label)
        if found is None:
            found = codes[label] = self._next[kind]
            self._next[kind] += 1
            self.new.append((kind, found, label))
        return found

    def pack(self, design: Any) -> bytes | None:
        """An `InviteDesign`'s packed bytes, its labels numbered."""
        return pack_design(design.weight, design.fpc, design.group,
                           self.code("stratum", design.stratum), self.code("psu", design.psu))


def labels_by_code(rows: Iterable[tuple[str, int, str]]) -> dict[str, list[str]]:
    """A survey's `design_labels` rows (kind, code, label) as each kind's labels by code."""
    found: dict[str, dict[int, str]] = {kind: {} for kind in LABEL_KINDS}
    for kind, code, label in rows:
        found.setdefault(kind, {})[int(code)] = label
    # codes are numbered 0, 1, ... per kind; a gap (none made so) would read as no label
    return {kind: [codes.get(c, "") for c in range(max(codes, default=-1) + 1)]
            for kind, codes in found.items()}


def unpack_designs(blob: bytes, count: int) -> tuple[Any, Any, Any, Any, Any]:
    """The weight, fpc, random-group, stratum-code and PSU-code arrays of `count` packed designs
    joined in `blob` (the codes as int64)."""
    import numpy as np  # here: the store's base module imports this one, and numpy is slow

    record = np.dtype([("weight", "<f8"), ("fpc", "<f8"), ("group", "<i8"), ("stratum", ">i4"),
                       ("psu", ">i4")])
    table = np.frombuffer(blob, dtype=record, count=count)
    return (np.ascontiguousarray(table["weight"]), np.ascontiguousarray(table["fpc"]),
            np.ascontiguousarray(table["group"]), table["stratum"].astype(np.int64),
            table["psu"].astype(np.int64))
