"""Invitation codes that carry their sampled unit's design (`invites create --design`): stored
with the code's hash on both backends, joined to the submission made with the code, never sent
by a device; a bad frame is one line and changes nothing stored."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.invites.claims import digest
from ldpsurvey.server.store import InviteDesign, open_store
from support.server_data import snapshot, sql, submission

pytestmark = pytest.mark.usefixtures("published")
BACKENDS = ("sqlite", "postgresql")
URL = "/api/surveys/health/submissions"

FRAME = """id,weight,stratum,psu,fpc
a1,10.5,north,school-1,40
a2,10.5,north,school-1,40
a3,12,north,school-2,40
b1,30,south,school-1,8
b2,30,south,school-9,8
"""


def write(tmp_path: Path, text: str, name: str = "frame.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def create(db_path: Any, frame: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                    "health", "--design", str(frame), *extra])


def printed_codes(result: Any) -> dict[str, str]:
    return {row["id"]: row["code"] for row in csv.DictReader(io.StringIO(result.stdout))}


def designs(db_path: Any) -> dict[str, InviteDesign]:
    """submission id -> design of the used codes (unused ones are listed with None)."""
    store = open_store(db_path)
    try:
        return {sid: d for sid, d in store.invite_designs("health") if sid is not None}
    finally:
        store.close()


def test_each_unit_gets_a_code_stored_with_its_design_and_joined_to_its_submission(
        db_path: Any, tmp_path: Path, client: Any) -> None:
    result = create(db_path, write(tmp_path, FRAME))
    assert result.exit_code == 0, result.output
    codes = printed_codes(result)
    assert list(codes) == ["a1", "a2", "a3", "b1", "b2"] and len(set(codes.values())) == 5
    assert "5 units, 2 strata, 4 PSUs, finite-population correction" in result.stderr
    dump = repr(snapshot(db_path))
    # Only hashes are stored, and nothing of the operator's ids.
    assert not any(code in dump for code in codes.values())
    assert all(digest(code) in dump for code in codes.values())
    assert "'a1'" not in dump and "'b2'" not in dump
    stored = sql(db_path, "SELECT weight, stratum, psu, fpc, random_group FROM invites "
                          "WHERE code_sha256 = ?", (digest(codes["a3"]),))
    assert stored == [(12.0, "north", "school-2", 40.0, None)]
    assert designs(db_path) == {}  # no code used yet
    # The device sends only its code; the design is joined to the submission it binds.
    body = submission(invite=codes["b1"])
    assert set(body) == {"submission_id", "answers", "invite"}
    assert client.post(URL, json=body).status_code == 200
    assert designs(db_path) == {body["submission_id"]: InviteDesign(30.0, "south", "school-1",
                                                                     8.0, None)}
    listed = CliRunner().invoke(cli, ["invites", "list", "--db", str(db_path), "--survey",
                                      "health"])
    assert "invite-only; 5 code(s) issued, 1 used" in listed.output


def test_a_frame_without_strata_or_psus_makes_each_unit_its_own_psu(
        db_path: Any, tmp_path: Path) -> None:
    result = create(db_path, write(tmp_path, "id,weight\nx,1.5\ny,2\n"))
    assert result.exit_code == 0, result.output
    rows = sql(db_path, "SELECT weight, stratum, psu, fpc FROM invites ORDER BY weight")
    assert rows == [(1.5, None, None, None), (2.0, None, None, None)]


BAD_FRAMES = {
    "missing weight": ("id,weight\nx,1\ny,\n", "line 3: weight is missing"),
    "negative weight": ("id,weight\nx,1\ny,-2\n", "line 3: weight -2 is negative"),
    "zero weight": ("id,weight\nx,1\ny,0\n", "line 3: weight is 0"),
    "non-numeric weight": ("id,weight\nx,1\ny,heavy\n", "line 3: weight 'heavy' is not a number"),
    "infinite weight": ("id,weight\nx,1\ny,inf\n", "line 3: weight must be a finite number"),
    "duplicate id": ("id,weight\nx,1\ny,1\nx,2\n", "line 4: id 'x' is a duplicate of line 2"),
    "unknown column": ("id,weight,region\nx,1,n\n", "unknown column(s) 'region'"),
    "no weight column": ("id,stratum\nx,n\n", "no 'weight' column"),
    "no id column": ("weight\n1\n", "no 'id' column"),
    "repeated column": ("id,weight,weight\nx,1,1\n", "column 'weight' appears twice"),
    "empty file": ("", "empty; expected a header line"),
    "header only": ("id,weight\n", "no units (only a header)"),
    "short row": ("id,weight,stratum\nx,1\n", "line 2: 2 fields, the header has 3"),
    "lonely psu": ("id,weight,stratum,psu\nx,1,n,p1\ny,1,n,p2\nz,1,s,p3\n",
                   "stratum 's' has a single PSU"),
    "fpc differs": ("id,weight,stratum,fpc\nx,1,n,10\ny,1,n,12\n",
                    "line 3: fpc 12 differs from 10 of stratum 'n' (line 2)"),
    "fpc below psus": ("id,weight,fpc\nx,1,2\ny,1,2\nz,1,2\n",
                       "has 3 PSUs sampled but an fpc of 2"),
    "fpc not positive": ("id,weight,fpc\nx,1,0\ny,1,0\n", "line 2: fpc must be > 0"),
    "fpc sizes and fractions": ("id,weight,stratum,fpc\nx,1,n,10\ny,1,n,10\nz,1,s,0.5\n"
                                "w,1,s,0.5\n", "the fpc of stratum 's' is a fraction (0.5)"),
    "missing stratum": ("id,weight,stratum\nx,1,n\ny,1,\n", "line 3: stratum is missing"),
    # finite but beyond any population: the estimates' sums overflowed (0.0% printed)
    "weight 1e308": ("id,weight\nx,1e308\ny,1e308\n", "line 2: weight 1e308 is above 1e+15"),
    "fpc 1e308": ("id,weight,fpc\nx,1,1e308\ny,1,1e308\n", "line 2: fpc 1e308 is above 1e+15"),
    "fraction 1e-300": ("id,weight,fpc\nx,1,1e-300\ny,1,1e-300\n",
                        "a fraction 1e-300 of a population above 1e+15 PSUs"),
}


@pytest.mark.parametrize("case", list(BAD_FRAMES))
def test_a_bad_frame_is_one_line_and_stores_nothing(db_path: Any, tmp_path: Path,
                                                    case: str) -> None:
    text, message = BAD_FRAMES[case]
    before = snapshot(db_path)
    result = create(db_path, write(tmp_path, text))
    assert result.exit_code == 1, result.output
    assert message in result.output and result.output.count("\n") == 1, result.output
    assert snapshot(db_path) == before


def test_lonely_psus_pass_when_allowed(db_path: Any, tmp_path: Path) -> None:
    frame = write(tmp_path, "id,weight,stratum,psu\nx,1,n,p1\ny,1,n,p2\nz,1,s,p3\n")
    assert create(db_path, frame, "--allow-lonely-psu").exit_code == 0
    assert sql(db_path, "SELECT count(*) FROM invites") == [(3,)]


def test_codes_with_and_without_a_design_are_not_mixed(db_path: Any, tmp_path: Path) -> None:
    runner = CliRunner()
    plain = ["invites", "create", "--db", str(db_path), "--survey", "health", "--count", "2"]
    assert runner.invoke(cli, plain).exit_code == 0
    before = snapshot(db_path)
    refused = create(db_path, write(tmp_path, FRAME))
    assert refused.exit_code == 1 and "2 invitation code(s) without a design" in refused.output
    assert snapshot(db_path) == before


def test_plain_codes_are_refused_once_codes_carry_a_design(db_path: Any, tmp_path: Path) -> None:
    assert create(db_path, write(tmp_path, FRAME)).exit_code == 0
    before = snapshot(db_path)
    refused = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                       "health", "--count", "2"])
    assert refused.exit_code == 1 and "new codes need --design too" in refused.output
    assert snapshot(db_path) == before


def test_a_second_frame_must_fit_the_first(db_path: Any, tmp_path: Path) -> None:
    assert create(db_path, write(tmp_path, FRAME)).exit_code == 0
    before = snapshot(db_path)
    other_fpc = write(tmp_path, "id,weight,stratum,psu,fpc\nc1,5,north,school-7,41\n", "b.csv")
    refused = create(db_path, other_fpc)
    assert refused.exit_code == 1
    assert "fpc 41 differs from 40 of stratum 'north' (the invitations created before)" \
        in refused.output
    no_strata = write(tmp_path, "id,weight\nc1,5\nc2,5\n", "c.csv")
    refused = create(db_path, no_strata)
    assert refused.exit_code == 1 and "made before have 'stratum'" in refused.output
    assert snapshot(db_path) == before
    # A new PSU in a stored stratum is fine (a second wave of the same design).
    more = write(tmp_path, "id,weight,stratum,psu,fpc\nc1,5,north,school-7,40\n", "d.csv")
    assert create(db_path, more).exit_code == 0
    assert sql(db_path, "SELECT count(*) FROM invites") == [(6,)]


def test_random_groups_are_dealt_per_psu_and_balanced(db_path: Any, tmp_path: Path) -> None:
    lines = ["id,weight,stratum,psu"] + [f"u{i},2,s{i % 4},p{i // 3}" for i in range(60)]
    result = create(db_path, write(tmp_path, "\n".join(lines) + "\n"), "--groups", "4")
    assert result.exit_code == 0, result.output
    rows = sql(db_path, "SELECT stratum, psu, random_group FROM invites")
    group_of: dict[tuple[str, str], set[int]] = {}
    for stratum, psu, group in rows:
        group_of.setdefault((stratum, psu), set()).add(group)
    assert all(len(g) == 1 for g in group_of.values())  # a PSU never splits across groups
    sizes = [sum(1 for g in group_of.values() if g == {k}) for k in (1, 2, 3, 4)]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == len(group_of)
    for stratum in ("s0", "s1", "s2", "s3"):  # dealt within strata in turn (Kott's DAGJK)
        spread = [sum(1 for (s, _), g in group_of.items() if s == stratum and g == {k})
                  for k in (1, 2, 3, 4)]
        assert max(spread) - min(spread) <= 1, spread
    before = snapshot(db_path)
    again = create(db_path, write(tmp_path, "id,weight,stratum,psu\nz,2,s0,p99\nw,2,s0,p98\n",
                                  "more.csv"))
    assert again.exit_code == 1 and "random groups are dealt once" in again.output
    assert snapshot(db_path) == before


@pytest.mark.parametrize("args, message", [
    ((), "give exactly one of --count N, --design FRAME.csv or --from-export MAIN.csv"),
    (("--count", "2", "--groups", "3"), "--groups and --allow-lonely-psu go with --design"),
])
def test_usage_errors(db_path: Any, args: tuple[str, ...], message: str) -> None:
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", *args])
    assert result.exit_code == 2 and message in result.output


def test_too_many_groups_is_refused(db_path: Any, tmp_path: Path) -> None:
    result = create(db_path, write(tmp_path, "id,weight\nx,1\ny,1\n"), "--groups", "3")
    assert result.exit_code == 1 and "--groups must be between 2 and the number of PSUs (2)" \
        in result.output


def _undo_numbered_labels(db_path: Any) -> None:
    """The schema before the design labels were numbered (SQLite 9, PostgreSQL 7)."""
    from support.server_data import is_postgres

    sql(db_path, "DROP TABLE design_labels")
    for index in ("invites_designed", "invites_grouped"):
        sql(db_path, "DROP INDEX " + (index if is_postgres(db_path) else f"idx_{index}"))


@pytest.mark.backends("sqlite", "postgresql")
def test_codes_stored_before_the_design_columns_keep_working(db_path: Any, client: Any) -> None:
    """A database whose invites table predates the design columns migrates in place: its codes
    carry no design and still admit their submission."""
    from ldpsurvey.server.store.schema import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
    from support.server_data import is_postgres

    migrations = POSTGRES_MIGRATIONS if is_postgres(db_path) else SQLITE_MIGRATIONS
    code = "inv_" + "B" * 22
    sql(db_path, "INSERT INTO invite_surveys (survey_id, created) VALUES ('health', 'then')")
    sql(db_path, "INSERT INTO invites (code_sha256, survey_id) VALUES (?, 'health')",
        (digest(code),))
    # undo the design migration and the five after it (carried values, submissions'
    # designs, packed reports, packed designs, numbered labels)
    _undo_numbered_labels(db_path)
    for column in ("weight", "stratum", "psu", "fpc", "random_group", "carried",
                   "design_packed"):
        sql(db_path, f"ALTER TABLE invites DROP COLUMN {column}")
    for column in ("weight", "stratum", "psu", "fpc", "random_group", "packed",
                   "design_packed"):
        sql(db_path, f"ALTER TABLE submissions DROP COLUMN {column}")
    sql(db_path, "ALTER TABLE invite_surveys DROP COLUMN carried")
    sql(db_path, "DELETE FROM schema_version WHERE version >= ?", (len(migrations) - 5,))
    open_store(db_path).close()  # migrates
    assert sql(db_path, "SELECT weight, stratum, psu, fpc, random_group, carried FROM "
                        "invites") == [(None, None, None, None, None, None)]
    assert client.post(URL, json=submission(invite=code)).status_code == 200
    assert designs(db_path) == {}


@pytest.mark.backends("sqlite", "postgresql")
def test_a_submission_carries_its_codes_design_and_an_older_database_gets_them(
        db_path: Any, tmp_path: Path, client: Any) -> None:
    """A submission made with a designed code carries that design on its own row, copied when
    the code is claimed (a design-based analysis reads it with the reports in one scan, not
    through each submission's code); a database stored before that migration gets them
    copied when it opens, with nothing else changed."""
    from ldpsurvey.server.store.schema import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
    from support.server_data import is_postgres

    codes = printed_codes(create(db_path, write(tmp_path, FRAME)))
    bodies = [submission(invite=codes[unit]) for unit in ("a3", "b2")]
    for body in bodies:
        assert client.post(URL, json=body).status_code == 200
    query = ("SELECT submission_id, weight, stratum, psu, fpc, random_group, reports FROM "
             "submissions ORDER BY seq")
    stored = sql(db_path, query)
    assert [row[:6] for row in stored] == [
        (bodies[0]["submission_id"], 12.0, "north", "school-2", 40.0, None),
        (bodies[1]["submission_id"], 30.0, "south", "school-9", 8.0, None)]
    migrations = POSTGRES_MIGRATIONS if is_postgres(db_path) else SQLITE_MIGRATIONS
    # the schema before (and before the packed reports, packed designs and numbered labels,
    # the migrations after it)
    _undo_numbered_labels(db_path)
    for column in ("weight", "stratum", "psu", "fpc", "random_group", "packed",
                   "design_packed"):
        sql(db_path, f"ALTER TABLE submissions DROP COLUMN {column}")
    sql(db_path, "ALTER TABLE invites DROP COLUMN design_packed")
    sql(db_path, "DELETE FROM schema_version WHERE version >= ?", (len(migrations) - 3,))
    open_store(db_path).close()  # migrates
    assert sql(db_path, query) == stored


def test_the_designs_route_serves_each_submissions_design_to_an_analyst(
        db_path: Any, tmp_path: Path, client: Any, auth: dict[str, str]) -> None:
    import json

    codes = printed_codes(create(db_path, write(tmp_path, FRAME)))
    bodies = [submission(invite=codes[unit]) for unit in ("a3", "b2")]
    for body in bodies:
        assert client.post(URL, json=body).status_code == 200
    response = client.get("/api/surveys/health/designs.jsonl", headers=auth)
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    used = sorted((d for d in lines if d["submission_id"] is not None),
                  key=lambda d: d["weight"])
    assert used == [
        {"submission_id": bodies[0]["submission_id"], "weight": 12.0, "stratum": "north",
         "psu": "school-2", "fpc": 40.0, "group": None},
        {"submission_id": bodies[1]["submission_id"], "weight": 30.0, "stratum": "south",
         "psu": "school-9", "fpc": 8.0, "group": None}]
    # The units that have not responded are listed too (their design, no code, no id).
    assert len(lines) == 5 and sum(d["submission_id"] is None for d in lines) == 3
    assert not any(code in response.get_data(as_text=True) for code in codes.values())
    assert client.get("/api/surveys/health/designs.jsonl").status_code == 401
    missing = client.get("/api/surveys/nope/designs.jsonl", headers=auth)
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "not_found"
