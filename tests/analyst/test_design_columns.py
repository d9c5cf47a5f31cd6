"""The design-based reader's fast path (server/report_columns.py `packed_columns`,
`submission_columns` and `submission_designs`): every stored submission's reports read column
by column in one pass of the database, and the designs joined by the database, equal to the
row-by-row reading and the join in Python, for reports of every shape (yes/no, indices,
integers, bit vectors of one and of several words, sets), with skipped optional questions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ldpsurvey.analyst.design.data import DbSource, Respondents, join_invitations
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey


def design_pages(store: Any, survey_id: str, version: int, page: int) -> list[Any]:
    """The designs of a version's pages of stored submissions (`Store.packed_pages`)."""
    return [p.designs for p in store.packed_pages(survey_id, version, page, reports=False)]


SURVEY: dict[str, Any] = {
    "id": "shapes", "title": "Report shapes", "version": 1,
    "questions": [
        {"id": "sex", "text": "sex", "type": "binary", "disclosed": True},
        {"id": "region", "text": "region", "type": "categorical", "disclosed": True,
         "options": ["n", "s", "e"]},
        {"id": "age", "text": "age", "type": "integer", "disclosed": True, "min": 18,
         "max": 90, "optional": True},
        {"id": "smoker", "text": "q1", "type": "binary", "epsilon": 1.0,
         "mechanism": "binary_rr"},
        {"id": "mood", "text": "q2", "type": "ordinal", "epsilon": 1.0,
         "options": list("abcde"), "mechanism": "ordinal_exp"},
        {"id": "small", "text": "q3", "type": "categorical", "epsilon": 1.0,
         "options": list("abcdefgh"), "mechanism": "oue"},
        {"id": "wide", "text": "q4", "type": "categorical", "epsilon": 1.0,
         "options": [f"o{i}" for i in range(40)], "mechanism": "oue", "optional": True},
        {"id": "drinks", "text": "q5", "type": "integer", "epsilon": 1.0, "min": 0,
         "max": 30, "mechanism": "geometric", "optional": True},
        {"id": "forced", "text": "q6", "type": "binary", "mechanism": "forced_response",
         "params": {"p_truth": "3/4", "forced": {"yes": "1/6", "no": "1/12"}}},
        {"id": "drugs", "text": "q7", "type": "multiselect", "epsilon": 2.0,
         "options": ["a", "b", "c", "d"], "optional": True},
    ],
}
N = 300


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def stored(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """N submissions through the server's API (checked at ingest), each with an invitation
    code carrying a design; optional questions skipped now and then. In SQLite and in
    PostgreSQL: both stores have the column path (issue 40's one data path)."""
    if request.param == "sqlite":
        yield str(_stored(tmp_path_factory.mktemp("shapes") / "shapes.db"))
        return
    server = request.getfixturevalue("pg_server")
    url = server.create_database()
    try:
        yield str(_stored(url))
    finally:
        server.drop_database(url)


@pytest.fixture(scope="module")
def stored_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _stored(tmp_path_factory.mktemp("shapes") / "shapes.db")


def _stored(path: Any) -> Any:
    """The database at `path` (a SQLite file or a PostgreSQL URL) with the N submissions."""
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from ldpsurvey.server.invites import create_designed
    from ldpsurvey.shared.design_frame import parse_frame
    from ldpsurvey.shared.mechanisms.base import plain
    from support.server_data import manifest

    app = create_app({"DATABASE": str(path), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    token = create_token(store, "t")[1]
    client = app.test_client()
    assert client.post("/api/surveys", json=manifest(SURVEY),
                       headers={"Authorization": f"Bearer {token}"}).status_code == 201
    frame = parse_frame("id,weight,stratum,psu,fpc\n" + "".join(
        f"u{i},{1.5 + i % 7 / 3!r},s{i % 3},p{i % 30},{40}\n" for i in range(N)))
    codes = dict(create_designed(store, SURVEY["id"], frame))
    survey = Survey.from_dict(SURVEY)
    rng = np.random.default_rng(3)
    bodies = []
    for i in range(N):
        reports = {}
        for q in survey.questions:
            if q.optional and rng.random() < 0.2:
                continue
            m = mechanism_for(q)
            if q.type == "multiselect":
                answer = [o for o in q.labels if rng.random() < 0.4]
                reports[q.id] = plain(m.perturb(answer))
                continue
            index = np.array([int(rng.integers(m.k))])
            reports[q.id] = plain(m.perturb_many(index, rng))[0]
        bodies.append({"submission_id": f"00000000-0000-4000-8000-{i:012d}",
                       "answers": reports, "invite": codes[f"u{i}"]})
    for start in range(0, N, 50):
        response = client.post(f"/api/surveys/{SURVEY['id']}/submissions",
                               json={"submissions": bodies[start:start + 50]})
        assert response.status_code == 200, response.get_json()
    store.close()
    return path


def rows_respondents(source: DbSource) -> Respondents:
    """The row-by-row reading (orjson per stored submission)."""
    import orjson

    rows = source.store.export_rows(source.record.id, source.record.version, 0, 10**6)
    return Respondents(tuple(r[2] for r in rows), tuple(orjson.loads(r[4]) for r in rows),
                       validated=True)


def _texts(column: Any) -> Any:
    """A label column as its labels (the database's come numbered: NumberedLabels)."""
    from ldpsurvey.shared.design import NumberedLabels

    return column.texts() if isinstance(column, NumberedLabels) else column


def _page_labels(value: Any, labels: list[str]) -> Any:
    """A DesignPage's stratum or PSU as its labels joined by \x1f (a page read packed holds
    the codes, one read from the columns the joined labels)."""
    if isinstance(value, np.ndarray):
        return "\x1f".join(labels[c] if c >= 0 else "" for c in value.tolist())
    return value


def test_columns_equal_rows_for_every_report_shape(stored: Path) -> None:
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import DesignOptions, pseudo_values, weighted

    with db_source(str(stored), SURVEY["id"], None) as source:
        fast = source.respondents()
        slow = rows_respondents(source)
        assert fast.answers is None  # the column path was taken
        assert list(fast.ids) == list(slow.ids)
        compiled = source.record.compiled()
        for q in compiled.survey.questions:
            mechanism = compiled.mechanisms[q.id]
            present_f, reports_f = fast.reports(q.id, mechanism)
            present_s, reports_s = slow.reports(q.id, mechanism)
            assert (present_f == present_s).all(), q.id
            assert 0 < present_f.sum() <= N
            assert reports_f.reshape(len(reports_f), -1).tolist() == \
                reports_s.reshape(len(reports_s), -1).tolist(), q.id
            if q.type == "binary":
                assert reports_f.dtype == bool, q.id
        # the same pseudo-values, and the design joined by the database as in Python
        w = weighted(source, DesignOptions(weighted=True))
        joined = source.respondents_joined()[1]
        assert joined is not None
        python = join_invitations(slow, source.invite_designs())
        assert np.array_equal(joined.weights, python.weights)
        for name in ("strata", "psus", "fpc"):
            assert np.array_equal(_texts(getattr(joined, name)), getattr(python, name)), name
        assert joined.groups is None and python.groups is None
        assert joined.source == python.source
        slow_w = type(w)(w.version, slow, w.design, w.joined, w.options)
        for q in compiled.survey.questions:
            try:
                a, b = pseudo_values(w, q.id), pseudo_values(slow_w, q.id)
            except Exception as exc:  # no linear debias: both paths say so
                with pytest.raises(type(exc)):
                    pseudo_values(slow_w, q.id)
                continue
            assert np.array_equal(a.values, b.values) and np.array_equal(a.noise, b.noise), q.id


def test_a_submission_without_a_design_is_refused_by_both_paths(stored_sqlite: Path,
                                                                 tmp_path: Path) -> None:
    """A submission stored without a designed code: the database's join says how many, as
    the Python join does."""
    import sqlite3

    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.shared.errors import AnalysisError

    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(copy) as target:
        source_db.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE invites SET submission_id = NULL WHERE submission_id = "
                     "'00000000-0000-4000-8000-000000000007'")
        conn.execute("UPDATE submissions SET weight = NULL, stratum = NULL, psu = NULL, "
                     "fpc = NULL, random_group = NULL WHERE submission_id = "
                     "'00000000-0000-4000-8000-000000000007'")  # as if made without the code
    with db_source(str(copy), SURVEY["id"], None) as source:
        respondents = source.respondents()
        with pytest.raises(AnalysisError, match=f"1 of {N:,} submissions have no design"):
            source.respondents_joined()
        with pytest.raises(AnalysisError, match=f"1 of {N:,} submissions have no design"):
            join_invitations(respondents, source.invite_designs())


def test_designs_read_in_pages_are_the_designs_read_at_once(stored: Path) -> None:
    """Store.packed_pages's designs page by page (the numbers read as floats, the labels
    joined over the same rows), read alone or with the packed reports in the same pass, give
    the same columns as one page: nothing shifts at a page edge."""
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.server.report_columns import packed_columns, submission_designs

    with db_source(str(stored), SURVEY["id"], None) as source:
        version = source.record.version
        compiled = source.record.compiled()
        qids = [q.id for q in compiled.survey.questions]
        whole = submission_designs(source.store, SURVEY["id"], version)
        paged = submission_designs(source.store, SURVEY["id"], version, page=7)
        with_reports = packed_columns(source.store, compiled.packed, SURVEY["id"], version,
                                      qids, page=7, designs=True)
    assert whole is not None and paged is not None and whole["weight"].size == N
    assert with_reports is not None and with_reports.designs is not None
    for name, column in whole.items():
        for read in (paged, with_reports.designs):
            assert (read[name] is None) if column is None else np.array_equal(
                _texts(column), _texts(read[name])), name


def test_a_design_based_read_passes_over_the_submissions_once(stored_sqlite: Path) -> None:
    """The reports and the designs of a design-based report come from one pass over the
    stored submissions (`Store.packed_pages`): one query per page of rows (and one that
    finds no more), not one per page for each."""
    from ldpsurvey.analyst.design.data import db_source

    with db_source(str(stored_sqlite), SURVEY["id"], None) as source:
        statements: list[str] = []
        source.store._conn().set_trace_callback(statements.append)
        respondents, joined = source.respondents_joined()
        source.store._conn().set_trace_callback(None)
    assert respondents.n == N and joined is not None and joined.weights.size == N
    pages = [s for s in statements if "ORDER BY seq LIMIT" in s]
    assert len(pages) == 2, pages


def test_a_row_stored_without_its_codes_design_is_joined_through_the_code(
        stored_sqlite: Path, tmp_path: Path) -> None:
    """A submission stored by a version before schema 6 while a newer one had migrated the
    database (a rolling upgrade) has no copy of its code's design on its row: the read joins
    it through the code instead of refusing it."""
    import sqlite3

    from ldpsurvey.analyst.design.data import db_source

    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(copy) as target:
        source_db.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE submissions SET weight = NULL, stratum = NULL, psu = NULL, "
                     "fpc = NULL, random_group = NULL WHERE submission_id = "
                     "'00000000-0000-4000-8000-000000000007'")
    with db_source(str(copy), SURVEY["id"], None) as source:
        respondents, joined = source.respondents_joined()
        python = join_invitations(respondents, source.invite_designs())
    assert joined is not None and not np.isnan(joined.weights).any()
    for name in ("weights", "strata", "psus", "fpc"):
        assert np.array_equal(_texts(getattr(joined, name)), getattr(python, name)), name


def test_submission_ids_are_read_only_when_a_row_is_named(stored: Path) -> None:
    """The column path leaves the submission ids in the database (`StoredIds`): a design-based
    report, weighted and raked, never reads them; asked for one (an error naming a row), all
    are read, in arrival order, equal to the rows' ids."""
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import DesignOptions, RowNames, weighted
    from ldpsurvey.server.report_columns import StoredIds

    with db_source(str(stored), SURVEY["id"], None) as source:
        w = weighted(source, DesignOptions(weighted=True))
        ids = w.respondents.ids
        assert isinstance(ids, StoredIds) and len(ids) == N
        assert ids._ids is None  # not read by the whole weighting
        slow = rows_respondents(source)
        assert RowNames(ids)[7] == f"submission {slow.ids[7]}"
        assert list(ids) == list(slow.ids) and ids[-1] == slow.ids[-1]
        short = StoredIds(source.store, SURVEY["id"], source.record.version, N + 1, page=50)
        with pytest.raises(Exception, match="1 submission"):
            list(short)


def test_the_report_from_columns_equals_the_report_from_rows(stored: Path,
                                                             tmp_path: Path) -> None:
    """The whole design-based document (every report shape, optional questions skipped,
    raked to a disclosed margin) read by the column path (reports parsed by numpy, designs
    read off the rows into numpy records, labels numbered by a dict, ids left unread) equals,
    number for number, the one read the old way: row by row with orjson, the designs joined
    through the invitation codes in Python, the labels as numpy text."""
    import json

    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import DesignOptions, estimate_document, weighted
    from ldpsurvey.analyst.margins import Calibration

    margins = tmp_path / "margins.csv"
    margins.write_text("question,value,total\nregion,n,4000\nregion,s,3000\nregion,e,3000\n")

    class Rows:
        """The same database read the old way (no column path, no database join)."""

        def __init__(self, source: DbSource) -> None:
            self.source = source

        def version(self) -> Any:
            return self.source.version()

        def respondents(self) -> Respondents:
            return rows_respondents(self.source)

        def invite_designs(self) -> Any:
            return self.source.invite_designs()

        def estimates(self, confidence: float) -> Any:
            return self.source.estimates(confidence)

    for options in (DesignOptions(weighted=True),
                    DesignOptions(calibration=Calibration("rake", margins))):
        with db_source(str(stored), SURVEY["id"], None) as source:
            fast = weighted(source, options)
            slow = weighted(Rows(source), options)  # type: ignore[arg-type]
            assert fast.respondents.answers is None and slow.respondents.answers is not None
            unweighted = source.estimates(0.95)
            documents = [json.dumps(estimate_document(w, 0.95, unweighted), sort_keys=True)
                         for w in (fast, slow)]
        assert documents[0] == documents[1]


def test_every_submission_is_stored_with_its_packed_row_and_a_report_reads_it(
        stored: Path) -> None:
    """Ingest writes each submission's reports packed (server/report_columns.py PackedLayout,
    each question as its unit packs it) with its JSON, in SQLite and PostgreSQL; the design
    report reads the packed rows (no JSON), equal to the JSON column path."""
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.server.report_columns import packed_columns, submission_columns

    with db_source(str(stored), SURVEY["id"], None) as source:
        compiled = source.record.compiled()
        layout = compiled.packed
        assert layout is not None and [q for q, _ in layout.fields] == \
            [q.id for q in compiled.survey.questions]
        qids = [q.id for q in compiled.survey.questions]
        pages = list(source.store.packed_pages(SURVEY["id"], 1, 7, designs=False))
        assert sum(p.count for p in pages) == N
        assert all(p.reports is not None and p.designs is None for p in pages)
        packed = packed_columns(source.store, layout, SURVEY["id"], 1, qids, page=7)
        assert packed is not None
        widths = [int(compiled.mechanisms[q].report_width) for q in qids]
        parsed = submission_columns(source.store, SURVEY["id"], 1, qids, widths)
        assert parsed is not None
        for qid in qids:
            (present_p, reports_p), (present_j, reports_j) = packed.columns[qid], parsed[1][qid]
            assert np.array_equal(present_p, present_j), qid
            assert reports_p.dtype == reports_j.dtype and reports_p.shape == reports_j.shape
            assert np.array_equal(reports_p, reports_j), qid


@pytest.mark.parametrize("change", ["packed = NULL", "packed = zeroblob(length(packed))",
                                    "packed = substr(packed, 1, 8)"])
def test_a_version_with_a_row_not_packed_by_its_layout_is_read_from_the_json(
        stored_sqlite: Path, tmp_path: Path, change: str) -> None:
    """A row stored before schema 7 (NULL), packed by another layout (its fingerprint), or
    cut short: the packed read refuses the version, and the report reads the JSON instead,
    with the same columns."""
    import sqlite3

    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.server.report_columns import packed_columns

    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(copy) as target:
        source_db.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute(f"UPDATE submissions SET {change} WHERE submission_id = "
                     "'00000000-0000-4000-8000-000000000007'")
    with db_source(str(copy), SURVEY["id"], None) as source:
        compiled = source.record.compiled()
        qids = [q.id for q in compiled.survey.questions]
        assert packed_columns(source.store, compiled.packed, SURVEY["id"], 1, qids) is None
        fast = source.respondents()
        slow = rows_respondents(source)
        assert fast.answers is None  # the JSON column path
        for q in compiled.survey.questions:
            mechanism = compiled.mechanisms[q.id]
            present_f, reports_f = fast.reports(q.id, mechanism)
            present_s, reports_s = slow.reports(q.id, mechanism)
            assert (present_f == present_s).all(), q.id
            assert reports_f.reshape(len(reports_f), -1).tolist() == \
                reports_s.reshape(len(reports_s), -1).tolist(), q.id


def test_a_report_that_does_not_pack_leaves_its_row_to_the_json() -> None:
    """Packing refuses what its layout cannot hold exactly (a float, an integer out of its
    unit's range, a list of another width): that row is stored with its JSON only."""
    from ldpsurvey.server.surveys import compile_survey

    layout = compile_survey("shapes", SURVEY).packed
    assert layout is not None
    good = {"sex": True, "region": 2, "smoker": False, "mood": 4, "small": [5],
            "wide": [3, 0], "forced": True, "drugs": [3]}
    assert layout.pack(good) is not None
    for qid, bad in (("mood", 1.0), ("mood", 2**40), ("small", [1, 2]), ("smoker", "yes"),
                     ("wide", [1])):
        assert layout.pack({**good, qid: bad}) is None, (qid, bad)


def test_a_batch_packs_each_row_as_it_packs_alone() -> None:
    """`pack_many` (ingest packs a request's rows at once) gives every row the bytes `pack`
    gives it alone: rows with questions skipped, booleans among integers, a batch holding
    reports that do not pack (that row None, the others packed) and one holding reports
    that pack only row by row (a nested list, an integer where a list of one is sent)."""
    from ldpsurvey.server.surveys import compile_survey

    layout = compile_survey("shapes", SURVEY).packed
    assert layout is not None
    rng = np.random.default_rng(5)
    good = {"sex": True, "region": 2, "age": 40, "smoker": False, "mood": 4, "small": [5],
            "wide": [3, 0], "drinks": 7, "forced": True, "drugs": [3]}
    bad = [("mood", 1.0), ("mood", 2**40), ("small", [1, 2]), ("smoker", "yes"),
           ("wide", [1]), ("drinks", -2**63 - 1)]
    odd = [("wide", [[3], 0]), ("small", 5), ("mood", True), ("wide", [True, 1])]  # they pack
    rows = []
    for _ in range(200):
        row = {q: v if not isinstance(v, int) or isinstance(v, bool) else int(rng.integers(9))
               for q, v in good.items() if rng.random() < 0.8}
        row["smoker"] = bool(rng.random() < 0.5)
        rows.append(row)
    assert layout.pack_many(rows) == [layout.pack(row) for row in rows]
    assert None not in layout.pack_many(rows)
    for qid, value in bad:
        spoiled = [*rows[:50], {**rows[50], qid: value}, *rows[51:100]]
        packed = layout.pack_many(spoiled)
        assert packed == [layout.pack(row) for row in spoiled], (qid, value)
        assert packed[50] is None and None not in packed[:50], (qid, value)
    for qid, value in odd:  # packed row by row (a nested list flattened), as `pack` does
        spoiled = [*rows[:50], {**rows[50], qid: value}, *rows[51:100]]
        assert layout.pack_many(spoiled) == [layout.pack(row) for row in spoiled], (qid, value)
        assert None not in layout.pack_many(spoiled), (qid, value)


def test_every_stored_packed_row_is_its_stored_reports_packed(stored: str) -> None:
    """The `packed` column ingest wrote (a request's rows packed at once) holds, row by row,
    the bytes `PackedLayout.pack` makes of the row's stored reports."""
    import json

    from ldpsurvey.server.surveys import compile_survey

    layout = compile_survey("shapes", SURVEY).packed
    assert layout is not None
    rows = _sql(stored, "SELECT reports, packed FROM submissions ORDER BY seq")
    assert len(rows) == N
    for reports, packed in rows:
        assert bytes(packed) == layout.pack(json.loads(reports)), reports


def migrate(old: Path, new: Path) -> None:
    """`migrate-store` from the SQLite store `old` into a new one at `new`."""
    from ldpsurvey.server.store import open_store
    from ldpsurvey.server.store_copy import copy_store

    source, target = open_store(old), open_store(new)
    try:
        copy_store(source, target)
    finally:
        source.close()
        target.close()


def test_migrate_store_packs_the_rows_stored_before_schema_7(stored_sqlite: Path,
                                                             tmp_path: Path) -> None:
    """A store whose rows have no packed row (written before schema 7) copied by
    `migrate-store` into a new store: every copied row is packed as ingest packs it, so the
    copy's design report reads the packed rows."""
    import sqlite3

    old = tmp_path / "old.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(old) as target:
        source_db.backup(target)
    with sqlite3.connect(old) as conn:
        packed = conn.execute("SELECT packed FROM submissions ORDER BY seq").fetchall()
        conn.execute("UPDATE submissions SET packed = NULL")
    migrate(old, tmp_path / "new.db")
    with sqlite3.connect(tmp_path / "new.db") as conn:
        assert conn.execute("SELECT packed FROM submissions ORDER BY seq").fetchall() == packed
    assert all(row[0] is not None for row in packed) and len(packed) == N


def _sql(stored: Any, sql: str) -> list[tuple]:
    """Run one statement on the stored database (a SQLite file or a PostgreSQL URL)."""
    if str(stored).startswith("postgres"):
        import psycopg

        with psycopg.connect(str(stored), autocommit=True) as conn:
            cursor = conn.execute(sql.replace("?", "%s"))
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
    import sqlite3

    with sqlite3.connect(stored) as conn:
        return conn.execute(sql).fetchall()


def test_every_designed_submission_is_stored_with_its_design_packed_and_read_from_it(
        stored: Any) -> None:
    """Ingest copies the code's design numbers packed (server/store/packed_designs.py: the
    weight, fpc and random group as little-endian float64/int64) with the columns, in SQLite
    and PostgreSQL: each row's bytes are its own columns' doubles, not a decimal round trip.
    Store.packed_pages reads pages of them with numpy, equal to the column path; a
    page holding a row stored before schema 8 (a design, no bytes) reads its columns."""
    import struct

    from ldpsurvey.analyst.design.data import db_source

    rows = _sql(stored, "SELECT weight, fpc, random_group, stratum, psu, design_packed FROM "
                        "submissions ORDER BY seq")
    coded = {(kind, code): label for kind, code, label in _sql(
        stored, f"SELECT kind, code, label FROM design_labels WHERE survey_id = '{SURVEY['id']}'")}
    assert len(rows) == N
    for weight, fpc, group, stratum, psu, packed in rows:
        assert packed is not None and len(packed) == 32
        w, f, g, s, p = struct.unpack("<ddq", bytes(packed)[:24]) + struct.unpack(
            ">ii", bytes(packed)[24:])
        assert struct.pack("<dd", w, f) == struct.pack("<dd", weight, fpc)
        assert g == (group or 0)
        assert (coded[("stratum", s)], coded[("psu", p)]) == (stratum, psu)
    one = "'00000000-0000-4000-8000-000000000007'"
    with db_source(str(stored), SURVEY["id"], None) as source:
        version = source.record.version
        labels = source.store.design_labels(SURVEY["id"])
        packed_pages = design_pages(source.store, SURVEY["id"], version, 7)
        _sql(stored, f"UPDATE submissions SET design_packed = NULL WHERE submission_id = {one}")
        try:
            mixed = design_pages(source.store, SURVEY["id"], version, 7)
        finally:
            _sql(stored, "UPDATE submissions SET design_packed = (SELECT i.design_packed FROM "
                         "invites AS i WHERE i.survey_id = submissions.survey_id AND "
                         f"i.submission_id = submissions.submission_id) WHERE "
                         f"submission_id = {one}")
    assert len(packed_pages) == len(mixed) == -(-N // 7)
    for a, b in zip(packed_pages, mixed, strict=True):
        assert a.weight.dtype == b.weight.dtype == np.float64
        assert a.weight.tobytes() == b.weight.tobytes()
        assert a.fpc.tobytes() == b.fpc.tobytes()
        assert isinstance(a.stratum, np.ndarray) and isinstance(a.psu, np.ndarray)  # codes
        assert _page_labels(a.stratum, labels["stratum"]) == _page_labels(b.stratum,
                                                                         labels["stratum"])
        assert _page_labels(a.psu, labels["psu"]) == _page_labels(b.psu, labels["psu"])
        assert a.group is None is b.group


def test_a_page_with_submissions_without_a_design_is_read_packed(
        stored_sqlite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission made without a designed code has no packed design (NULL, no weight): its
    page still reads packed (nan weight and fpc, group 0), as the column path reads it."""
    import sqlite3

    from ldpsurvey.server.store import open_store
    from ldpsurvey.server.store.sqlite import SqliteStore

    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(copy) as target:
        source_db.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE submissions SET weight = NULL, stratum = NULL, psu = NULL, "
                     "fpc = NULL, random_group = NULL, design_packed = NULL WHERE "
                     "submission_id IN ('00000000-0000-4000-8000-000000000007', "
                     "'00000000-0000-4000-8000-000000000008')")
        conn.execute("UPDATE invites SET random_group = 5 WHERE submission_id = "
                     "'00000000-0000-4000-8000-000000000001'")  # a group column is read
    store = open_store(copy)
    try:
        with sqlite3.connect(copy) as conn:  # the rows as if stored before schema 8
            conn.execute("UPDATE submissions SET design_packed = NULL")
        by_columns = design_pages(store, SURVEY["id"], 1, 7)
        assert all(p.group is not None for p in by_columns)
        with sqlite3.connect(copy) as conn:
            conn.execute("UPDATE submissions SET design_packed = (SELECT i.design_packed FROM "
                         "invites AS i WHERE i.submission_id = submissions.submission_id) "
                         "WHERE weight IS NOT NULL")

        def refused(*args: Any) -> Any:
            raise AssertionError("read the columns")

        monkeypatch.setattr(SqliteStore, "_design_columns", refused)
        packed = design_pages(store, SURVEY["id"], 1, 7)
        labels = store.design_labels(SURVEY["id"])
    finally:
        store.close()
    assert len(packed) == len(by_columns)
    assert np.isnan(packed[1].weight[0]) and np.isnan(packed[1].fpc[1])
    for a, b in zip(packed, by_columns, strict=True):
        for name in ("weight", "fpc", "group"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
        for name in ("stratum", "psu"):
            assert _page_labels(getattr(a, name), labels[name]) == getattr(b, name), name


def test_migrate_store_packs_the_designs_stored_before_schema_8(stored_sqlite: Path,
                                                                tmp_path: Path) -> None:
    """A store whose codes and rows have no packed design (written before schema 8) copied by
    `migrate-store`: every designed code and row of the copy is packed as ingest packs it."""
    import sqlite3

    old = tmp_path / "old.db"
    with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(old) as target:
        source_db.backup(target)
    query = {"submissions": "SELECT submission_id, design_packed FROM submissions ORDER BY seq",
             "invites": "SELECT code_sha256, design_packed FROM invites ORDER BY code_sha256"}
    with sqlite3.connect(old) as conn:
        packed = {t: conn.execute(q).fetchall() for t, q in query.items()}
        conn.execute("UPDATE submissions SET design_packed = NULL")
        conn.execute("UPDATE invites SET design_packed = NULL")
    migrate(old, tmp_path / "new.db")
    with sqlite3.connect(tmp_path / "new.db") as conn:
        assert {t: conn.execute(q).fetchall() for t, q in query.items()} == packed
    assert len(packed["submissions"]) == N
    assert all(row[1] is not None for rows in packed.values() for row in rows)


def _raked_document(target: Any, tmp_path: Path) -> str:
    """The design-based document of `target`, raked to a disclosed margin, as JSON text."""
    import json

    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.analyst.design.estimates import DesignOptions, estimate_document, weighted
    from ldpsurvey.analyst.margins import Calibration

    margins = tmp_path / "margins.csv"
    margins.write_text("question,value,total\nregion,n,4000\nregion,s,3000\nregion,e,3000\n")
    with db_source(str(target), SURVEY["id"], None) as source:
        w = weighted(source, DesignOptions(calibration=Calibration("rake", margins)))
        return json.dumps(estimate_document(w, 0.95, source.estimates(0.95)), sort_keys=True)


def test_the_labels_are_read_as_codes_with_the_numbers_and_named_once(stored: Any) -> None:
    """Each designed submission's stratum and PSU are stored as codes packed with its design
    numbers (the survey's labels numbered when its codes were made: `design_labels`), so the
    design read takes the codes from the packed bytes, never a label per row, and names them
    once per survey: the columns are `NumberedLabels` whose labels are each row's own."""
    from ldpsurvey.analyst.design.data import db_source
    from ldpsurvey.server.report_columns import submission_designs
    from ldpsurvey.shared.design import NumberedLabels

    rows = _sql(stored, "SELECT stratum, psu FROM submissions ORDER BY seq")
    with db_source(str(stored), SURVEY["id"], None) as source:
        pages = design_pages(source.store, SURVEY["id"], source.record.version, 7)
        read = submission_designs(source.store, SURVEY["id"], source.record.version, page=7)
    assert all(isinstance(p.stratum, np.ndarray) and isinstance(p.psu, np.ndarray)
               for p in pages)
    assert read is not None
    for j, name in enumerate(("stratum", "psu")):
        column = read[name]
        assert isinstance(column, NumberedLabels) and len(column.labels) == (3, 30)[j]
        assert column.texts().tolist() == [row[j] for row in rows]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_store_of_schema_8_gets_its_labels_numbered_by_the_migration(
        backend: str, stored_sqlite: Path, tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    """A store written before the labels were numbered (SQLite 8, PostgreSQL 6: 24 packed
    bytes, no `design_labels`) opened by this version: the migration numbers each survey's
    labels and appends every packed design's codes, so the report reads codes, and its
    document is the same, byte for byte, as before the migration."""
    import sqlite3

    from ldpsurvey.server.store import open_store
    from ldpsurvey.server.store.schema import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS

    if backend == "sqlite":
        target: Any = tmp_path / "old.db"
        with sqlite3.connect(stored_sqlite) as source_db, sqlite3.connect(target) as copy:
            source_db.backup(copy)
        cut, index, version = "substr", "idx_invites_designed", len(SQLITE_MIGRATIONS)
    else:
        server = request.getfixturevalue("pg_server")
        target = _stored(server.create_database())
        cut, index, version = "substring", "invites_designed", len(POSTGRES_MIGRATIONS)
    before = _raked_document(target, tmp_path)
    for table in ("invites", "submissions"):
        _sql(target, f"UPDATE {table} SET design_packed = {cut}(design_packed, 1, 24)")
    _sql(target, "DROP TABLE design_labels")
    for name in (index, index.replace("designed", "grouped")):
        _sql(target, f"DROP INDEX {name}")
    _sql(target, f"DELETE FROM schema_version WHERE version = {version}")
    open_store(target).close()  # migrates
    sizes = _sql(target, "SELECT length(design_packed), count(*) FROM submissions GROUP BY 1")
    assert sizes == [(32, N)]
    assert sorted(_sql(target, "SELECT kind, count(*), min(code), max(code) FROM design_labels "
                               "GROUP BY kind")) == [("psu", 30, 0, 29), ("stratum", 3, 0, 2)]
    assert _raked_document(target, tmp_path) == before
    from ldpsurvey.analyst.design.data import db_source

    with db_source(str(target), SURVEY["id"], None) as source:
        pages = design_pages(source.store, SURVEY["id"], 1, 1000)
    assert isinstance(pages[0].stratum, np.ndarray)


def test_the_designed_and_grouped_codes_are_found_by_an_index(stored_sqlite: Path) -> None:
    """`designed_invites` (how many of a survey's codes carry a design: the report's source
    line) counts a partial index of the designed codes, and the design read asks whether any
    code carries a random group of a partial index of the grouped codes: neither visits
    every code's row (a survey without groups, as here, would have all of them visited)."""
    from ldpsurvey.server.store import open_store

    store = open_store(stored_sqlite, read_only=True)
    try:
        seen: list[str] = []
        store._conn().set_trace_callback(seen.append)
        assert store.designed_invites(SURVEY["id"]) == N
        assert all(p.group is None for p in design_pages(store, SURVEY["id"], 1, 1000))
        store._conn().set_trace_callback(None)
        found = {index: [q for q in seen if "FROM invites" in q and where in q]
                 for index, where in (("idx_invites_designed", "weight IS NOT NULL"),
                                      ("idx_invites_grouped", "random_group IS NOT NULL"))}
        plans = {index: " ".join(str(row[-1]) for q in queries for row in store._conn().execute(
                 f"EXPLAIN QUERY PLAN {q}").fetchall()) for index, queries in found.items()}
    finally:
        store.close()
    for index, plan in plans.items():
        assert found[index] and f"USING INDEX {index}" in plan, (index, plan)
