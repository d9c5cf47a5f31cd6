"""How a question's reports are kept in a submission's packed row (issue 40, one data path).

Besides its JSON text, the store keeps each stored submission's integer reports packed in one
binary row (server/report_columns.py `PackedLayout`): per question a fixed number of
little-endian integers, so a report reads a question's column with `np.frombuffer` instead of
parsing JSON. Each question's unit says how its reports are packed (`QuestionType.
packed_reports`): how many bytes each integer takes. Packing is checked as it goes (`struct`
refuses a float, a list where a number is expected, or a number out of range), and a
submission that does not pack keeps its JSON only; its version is then read from the JSON (the
report path falls back), so a unit's choice affects speed, never a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# A row's integers as `struct` and numpy name them (little-endian, no padding).
_STRUCT_CODES = {"<i1": "b", "<i2": "h", "<i4": "i", "<i8": "q"}
# The report integers a packed row holds (a bool is 0 or 1); server/report_columns.py too.
INTEGER_TYPES = frozenset((int, bool))


@dataclass(frozen=True)
class PackedReports:
    """One question's reports in the packed row: `width` integers per report (the mechanism's
    `report_width`, lists flattened), each of numpy dtype `dtype`."""

    dtype: str
    width: int

    @classmethod
    def integers(cls, mechanism: Any, dtype: str) -> PackedReports:
        """`mechanism`'s reports as integers of `dtype`, except support-bit reports (a unary
        encoding's 32-bit words, a local hash's seed and bucket), which take 8 bytes."""
        if getattr(mechanism, "joint_reports", None) == "support_bits":
            dtype = "<i8"
        return cls(dtype, int(mechanism.report_width))

    @property
    def struct_format(self) -> str:
        return _STRUCT_CODES[self.dtype] * self.width

    def encode(self, report: Any) -> Any:
        """The row's integers for one report, a sequence (ValueError, or `struct.error` when
        packed: it does not pack; the row keeps its JSON only). Read, never changed: a flat
        list of integers of the width is returned as it is."""
        if self.width == 1:
            if isinstance(report, list):
                if len(report) != 1:
                    raise ValueError("a list where one integer is stored")
                report = report[0]
            if type(report) not in (int, bool):
                raise ValueError("not an integer")
            return (report,)
        if type(report) is list and len(report) == self.width and \
                INTEGER_TYPES.issuperset(map(type, report)):
            return report  # already the row's integers (the common case: checked in C)
        flat = _flat(report)
        if len(flat) != self.width or any(type(v) not in (int, bool) for v in flat):
            raise ValueError("not integers of this width")
        return flat

    def decode(self, column: np.ndarray) -> np.ndarray:
        """The reports of a column read from packed rows: (n,) int64, or (n, width) int64 for
        a report of width > 1, as the JSON path parses them."""
        return column.astype(np.int64)


def _flat(report: Any) -> list[Any]:
    if not isinstance(report, list):
        return [report]
    out: list[Any] = []
    for part in report:
        out += _flat(part)
    return out
