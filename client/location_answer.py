"""Answering a location question on the terminal: a cell as "row,col", or a region's name
(it stands for the region's central cell: `GeoExp.central_cell`)."""

from __future__ import annotations

from ..shared.errors import AnswerError
from ..shared.mechanisms import mechanism_for
from ..shared.survey import Question


def hint(q: Question) -> str:
    grid = q.location
    regions = f" or a region ({', '.join(q.groups)})" if q.groups else ""
    return (f"a cell as row,col (rows 1-{grid.rows} from the top, columns 1-{grid.cols} from "
            f"the left, cells of {grid.cell_km:g} km){regions}")


def parse(q: Question, text: str) -> str:
    """The cell label for what was typed; AnswerError if it names no cell or region."""
    text = text.strip()
    try:
        return q.options[mechanism_for(q).encode(text)]
    except AnswerError:
        raise AnswerError(f"{text!r} is not a cell (row,col within {q.location.rows} x "
                          f"{q.location.cols}) nor a region name") from None
