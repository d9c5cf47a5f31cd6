"""The `location` question type: a cell of a grid (shared/location_question.py), with
regions (named sets of cells) a report also estimates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AnswerError, SurveyError
from .base import DESIGN_CROSSTAB_REFUSAL, MAP, Definition, DeviceWords, QuestionType, TerminalWords


class LocationType(QuestionType):
    """A cell of a grid; `options` are its cells ("row,col"), `groups` its regions."""

    name = "location"
    keys = frozenset({"epsilon_geo", "grid", "regions", "background"})

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def canonical(self, question: Any) -> dict[str, Any]:
        return {**question.location.to_dict(),
                "regions": {name: list(members) for name, members in question.groups.items()}}

    described = "a location question"
    named_sets_key = "regions"
    two_server_refusal = ("a two-server survey has no location questions (yet): ask them in an "
                          "LDP survey")

    def parse(self, definition: Definition) -> Any:
        """The grid, its regions and the geo-indistinguishable mechanism
        (shared/location_question.py)."""
        from dataclasses import replace

        from ..location_question import parse_location_question

        return replace(parse_location_question(definition), **definition.skip)

    def declared_cells(self, data: Mapping[str, Any]) -> int:
        grid = data.get("grid")
        if isinstance(grid, Mapping):
            rows, cols = grid.get("rows"), grid.get("cols")
            if isinstance(rows, int) and isinstance(cols, int):
                return max(rows, 0) * max(cols, 0)
        return 0

    def check_hidden_condition(self, at: str, reads: str) -> None:
        raise SurveyError(at, f"a location question cannot depend on randomized answers "
                          f"({reads}): its grid has no 'not asked' cell")

    def translatable_options(self, question: Any) -> tuple[str, ...]:
        """None: its cells are not the designer's words."""
        return ()

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------

    chart = MAP

    def design_crosstab_refusal(self, question: Any) -> str | None:
        return DESIGN_CROSSTAB_REFUSAL.format(qid=question.id, type=self.name)

    def survey_warnings(self, question: Any) -> list[str]:
        """A grid without a background image is, on a phone, blank squares."""
        grid = question.location
        if grid.background is not None:
            return []
        return [f"warning: question {question.id}: its {grid.rows} x {grid.cols} grid has no "
                f"background image, so on a phone respondents see {grid.cells} blank squares "
                f"with nothing to find their place by; add background = "
                f"\"data:image/png;base64,...\" (a map of the area, at most 512 KiB: "
                f"`base64 -w0 map.png`; docs/location.md)"]

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------

    def visit(self, question: Any, path: Any) -> Any:
        return path.cell(question)

    def default_truth(self, question: Any) -> Any:
        """People cluster (`cluster_weights`)."""
        import numpy as np

        from .truth import Truth

        grid = question.location
        return Truth(np.arange(question.k), self.cluster_weights(grid.rows, grid.cols))

    @staticmethod
    def cluster_weights(rows: int, cols: int) -> Any:
        """P(cell) over a grid in index order (row-major): two Gaussian clusters (a town at a
        third of the way across, a smaller one at two thirds, with spreads of a sixth and a
        tenth of the grid), so regions differ and many cells are nearly empty, as real places
        are."""
        import numpy as np

        r, c = np.divmod(np.arange(rows * cols), cols)
        r, c = (r + 0.5) / rows, (c + 0.5) / cols
        big = np.exp(-((r - 1 / 3) ** 2 + (c - 1 / 3) ** 2) / (2 * (1 / 6) ** 2))
        small = 0.6 * np.exp(-((r - 2 / 3) ** 2 + (c - 3 / 4) ** 2) / (2 * 0.1**2))
        w = big + small
        return w / w.sum()

    # --- two-server measurement (shared/two_server) ---------------------------------------

    # --- on the device: answering and review words (client/) ------------------------------

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        return str(answer)

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        """A cell as "row,col", or a region's name (its central cell: `GeoExp.central_cell`),
        the regions named in the language shown."""
        grid = question.location
        names = [words.region(question, name) for name in question.groups]
        regions = f" or a region ({', '.join(names)})" if question.groups else ""
        return [], (f"a cell as row,col (rows 1-{grid.rows} from the top, columns "
                    f"1-{grid.cols} from the left, cells of {grid.cell_km:g} km){regions}")

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        """The cell label for a cell, a region's name, or its name in the language shown."""
        typed = words.typed_region(question, typed)
        try:
            return question.options[words.encode(question, typed)]
        except AnswerError:
            raise AnswerError(f"{typed!r} is not a cell (row,col within "
                              f"{question.location.rows} x {question.location.cols}) nor a "
                              "region name") from None

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
