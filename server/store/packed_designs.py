"""A submission's design numbers packed as bytes beside their columns (schema 8 / PostgreSQL 6).

An invitation code's weight, fpc and random group are packed once when the code is made, and
ingest copies the bytes to the submission with the columns (the same INSERT or UPDATE), so a
design-based report reads a page of them as one joined blob with numpy instead of one Python
float per row and column. The bytes are the stored doubles themselves (little-endian float64
weight and fpc, int64 random group): no decimal text in between, so the arrays are exactly the
columns'. A row without a design (no code, or a code without one) keeps NULL; a row stored
before schema 8 keeps NULL too, and its page is read from the columns as before.
"""

from __future__ import annotations

import struct
from typing import Any

_LAYOUT = struct.Struct("<ddq")
ROW_BYTES = _LAYOUT.size  # 24
# a page reads the columns' values, NULL as nan (weight, fpc) and 0 (random group); the nan is
# numpy's quiet one (np.nan's bytes), as the column path makes it
NAN = struct.unpack("<d", bytes.fromhex("000000000000f87f"))[0]
# the packed bytes of a submission without a design, as the column path reads one
NO_DESIGN = _LAYOUT.pack(NAN, NAN, 0)


def pack_design(weight: float | None, fpc: float | None, group: int | None) -> bytes | None:
    """A design's numbers packed (None: no design, i.e. no weight)."""
    if weight is None:
        return None
    return _LAYOUT.pack(weight, NAN if fpc is None else fpc, 0 if group is None else group)


def unpack_designs(blob: bytes, count: int) -> tuple[Any, Any, Any]:
    """The weight, fpc and random-group arrays of `count` packed designs joined in `blob`."""
    import numpy as np  # here: the store's base module imports this one, and numpy is slow

    record = np.dtype([("weight", "<f8"), ("fpc", "<f8"), ("group", "<i8")])
    table = np.frombuffer(blob, dtype=record, count=count)
    return (np.ascontiguousarray(table["weight"]), np.ascontiguousarray(table["fpc"]),
            np.ascontiguousarray(table["group"]))
