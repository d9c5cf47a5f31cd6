"""Columns of stored reports for the one-pass analyses (ad-hoc crosstabs, subgroups,
regression): the database extracts just the needed questions' reports of each submission
(`Store.question_reports`) and numpy parses the joined text in C, so no Python object is made
per report and the rest of each stored submission is never parsed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .store import Store


def parse_table(text: str, width: int) -> np.ndarray:
    """The (n, width) int64 table of joined JSON arrays of integers and booleans (lists inside
    flattened): '[1,[0,1]],[0,[1,1]]' with width 3 -> [[1, 0, 1], [0, 1, 1]]."""
    if not text:
        return np.zeros((0, width), dtype=np.int64)
    plain = (text.replace("[", "").replace("]", "").replace("true", "1")
             .replace("false", "0"))
    return np.fromstring(plain, dtype=np.int64, sep=",").reshape(-1, width)


def report_pages(store: Store, survey_id: str, version: int, qids: Sequence[str],
                 widths: Sequence[int], page: int) -> Iterator[tuple[list[np.ndarray], int]]:
    """Per page of stored submissions: each question's reports (an (n,) array for a report of
    width 1, else (n, width)) of the submissions that answered every question, and how many
    submissions the page scanned."""
    bounds = np.cumsum([0, *widths])
    for text, scanned in store.question_reports(survey_id, version, qids, page):
        table = parse_table(text, int(bounds[-1]))
        yield [table[:, bounds[j]] if widths[j] == 1 else table[:, bounds[j]:bounds[j + 1]]
               for j in range(len(qids))], scanned


def report_columns(store: Store, survey_id: str, version: int, qids: Sequence[str],
                   widths: Sequence[int], page: int) -> tuple[list[np.ndarray], int]:
    """Every page of `report_pages` joined: the columns, and how many submissions were left out
    for missing one of the questions."""
    parts: list[list[np.ndarray]] = [[] for _ in qids]
    scanned_total = 0
    for columns, scanned in report_pages(store, survey_id, version, qids, widths, page):
        scanned_total += scanned
        for j, column in enumerate(columns):
            parts[j].append(column)
    if not scanned_total:
        return [parse_table("", w)[:, 0] if w == 1 else parse_table("", w) for w in widths], 0
    columns = [np.concatenate(p) for p in parts]
    return columns, scanned_total - len(columns[0])
