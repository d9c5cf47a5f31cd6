"""`ldpsurvey migrate-store` refuses a database holding two-server rows (it does not copy the
`ts_*`/`hs_*` tables yet) with a one-line message, and copies nothing."""

from __future__ import annotations

import sqlite3

from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.common.two_server.db import TwoServerDb, tables_in_use
from ldpsurvey.server.store import open_store


def _store(path):
    open_store(str(path)).close()
    return path


def test_a_plain_store_has_no_two_server_rows(tmp_path):
    source = _store(tmp_path / "plain.db")
    assert tables_in_use(source) == []
    TwoServerDb(source)  # empty tables are not data
    assert tables_in_use(source) == []
    result = CliRunner().invoke(cli, ["migrate-store", "--from", str(source), "--to",
                                      str(tmp_path / "copy.db")])
    assert result.exit_code == 0, result.output


def test_two_server_rows_are_refused_and_nothing_is_copied(tmp_path):
    source = _store(tmp_path / "leader.db")
    db = TwoServerDb(source)
    with db.transaction() as cur:
        cur.execute("INSERT INTO ts_uploads (survey_id, report_id, version, body) VALUES "
                    "('s', 'r', 1, '{}')")
    assert tables_in_use(source) == ["ts_uploads"]
    target = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["migrate-store", "--from", str(source), "--to",
                                      str(target)])
    assert result.exit_code != 0
    assert "two-server data (ts_uploads)" in result.output
    assert "Traceback" not in result.output
    assert not target.exists() or not sqlite3.connect(target).execute(
        "SELECT name FROM sqlite_master").fetchall()
