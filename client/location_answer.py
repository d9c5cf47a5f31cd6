"""Answering a location question on the terminal: a cell as "row,col", or a region's name
(it stands for the region's central cell: `GeoExp.central_cell`), in the survey's language or
the one shown (`respond --lang`: the region's translated name, marked where it falls back)."""

from __future__ import annotations

from typing import Any

from ldpsurvey.shared.errors import AnswerError
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Question

from .survey_language import said


def hint(q: Question, text: Any = None) -> str:
    """What to type; `text` (a SurveyText) names the regions in the language shown."""
    grid = q.location
    names = list(q.groups) if text is None else [said(text.region(q.id, name), text)
                                                 for name in q.groups]
    regions = f" or a region ({', '.join(names)})" if q.groups else ""
    return (f"a cell as row,col (rows 1-{grid.rows} from the top, columns 1-{grid.cols} from "
            f"the left, cells of {grid.cell_km:g} km){regions}")


def parse(q: Question, text: str, shown: Any = None) -> str:
    """The cell label for what was typed (a cell, a region's name, or its name in the language
    `shown`); AnswerError if it names no cell or region."""
    text = text.strip()
    if shown is not None and shown.translated and text not in q.groups:
        names = {shown.region(q.id, name).text: name for name in q.groups}
        text = names.get(text, text)
    try:
        return q.options[mechanism_for(q).encode(text)]
    except AnswerError:
        raise AnswerError(f"{text!r} is not a cell (row,col within {q.location.rows} x "
                          f"{q.location.cols}) nor a region name") from None
