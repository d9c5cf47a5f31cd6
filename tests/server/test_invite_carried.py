"""Invitation codes that carry disclosed covariates from a main survey's export (`invites create
--from-export --key KEY --carry region,age_band`; docs/sensitive-module.md): only the named
columns are stored, with the code's hash, on both backends; the page can ask what a code
carries; each submission is joined to them for `report --by` and `regress`; bad input is one
line and changes nothing stored; codes without carried values behave as before."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.server.invites.claims import digest
from support.server_data import snapshot, sql, submission

pytestmark = pytest.mark.usefixtures("published")
BACKENDS = ("sqlite", "postgresql")
URL = "/api/surveys/health/submissions"

# As ODK Central exports a form: metadata columns, group-prefixed names, a KEY per interview.
EXPORT = """SubmissionDate,start,hh-region,hh-age_band,hh-head_name,phone,meta-instanceID,KEY
2026-11-02T09:12:00Z,2026-11-02T08:40:00Z,north,18-29,Amina Diallo,+221700000001,uuid:1a,uuid:1a
2026-11-02T10:01:00Z,2026-11-02T09:30:00Z,south,30-44,Jean Okafor,+221700000002,uuid:2b,uuid:2b
2026-11-02T11:20:00Z,2026-11-02T10:55:00Z,north,30-44,Fatou Ndiaye,+221700000003,uuid:3c,uuid:3c
"""
CARRY = "hh-region,hh-age_band"


def write(tmp_path: Path, text: str, name: str = "main.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def create(db_path: Any, export: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                    "health", "--from-export", str(export), "--key", "KEY",
                                    *extra])


def printed(result: Any) -> dict[str, str]:
    return {row["key"]: row["code"] for row in csv.DictReader(io.StringIO(result.stdout))}


def test_each_interview_gets_a_code_carrying_only_the_named_columns(
        db_path: Any, tmp_path: Path, client: Any) -> None:
    result = create(db_path, write(tmp_path, EXPORT), "--carry", CARRY)
    assert result.exit_code == 0, result.output
    codes = printed(result)
    assert list(codes) == ["uuid:1a", "uuid:2b", "uuid:3c"] and len(set(codes.values())) == 3
    assert "each carrying hh-region, hh-age_band" in result.stderr
    assert "fewer than 5 interviews" in result.stderr  # three interviews: every cell is small
    dump = repr(snapshot(db_path))
    # Only the hashes and the named columns: no code, no key, nothing else of the row.
    for secret in [*codes.values(), "uuid:1a", "Amina", "+2217", "2026-11-02"]:
        assert secret not in dump
    stored = sql(db_path, "SELECT carried FROM invites WHERE code_sha256 = ?",
                 (digest(codes["uuid:2b"]),))
    assert [json.loads(s) for (s,) in stored] == [{"hh-region": "south", "hh-age_band": "30-44"}]
    # The public document names what codes carry; the page asks what its code carries.
    document = client.get("/api/surveys/health").get_json()
    assert document["invite_only"] is True and document["invite_carries"] == ["hh-region",
                                                                              "hh-age_band"]
    asked = client.post("/api/surveys/health/invitation", json={"invite": codes["uuid:1a"]})
    assert asked.status_code == 200
    assert asked.get_json() == {"carries": {"hh-region": "north", "hh-age_band": "18-29"}}
    # The device sends only its code; the server links the submission to the carried values.
    body = submission(invite=codes["uuid:3c"])
    assert set(body) == {"submission_id", "answers", "invite"}
    assert client.post(URL, json=body).status_code == 200
    from ldpsurvey.server.store import open_store

    store = open_store(db_path)
    try:
        linked = store.submission_carried("health", 1)
    finally:
        store.close()
    assert [(sid, json.loads(v)) for sid, v in linked] == [
        (body["submission_id"], {"hh-region": "north", "hh-age_band": "30-44"})]
    listed = CliRunner().invoke(cli, ["invites", "list", "--db", str(db_path), "--survey",
                                      "health"])
    assert listed.output == ("health: invite-only; 3 code(s) issued, 1 used; each carries "
                             "hh-region, hh-age_band\n")


def test_a_kobotoolbox_export_is_read_too(db_path: Any, tmp_path: Path) -> None:
    """KoboToolbox: semicolons, a byte-order mark, group paths with '/', `_uuid` as the key."""
    kobo = tmp_path / "kobo.csv"
    kobo.write_bytes("\ufeffstart;group_hh/region;group_hh/age_band;_uuid\n"
                     "2026-11-02;north;18-29;0b1e\n2026-11-02;south;30-44;9f2a\n"
                     .encode("utf-8"))
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--from-export", str(kobo), "--key", "_uuid",
                                      "--carry", "group_hh/region"])
    assert result.exit_code == 0, result.output
    codes = printed(result)
    assert list(codes) == ["0b1e", "9f2a"]
    stored = sql(db_path, "SELECT carried FROM invites WHERE code_sha256 = ?",
                 (digest(codes["9f2a"]),))
    assert [json.loads(s) for (s,) in stored] == [{"group_hh/region": "south"}]


def test_codes_without_carried_values_serve_the_same_document(db_path: Any,
                                                               client: Any) -> None:
    before = client.get("/api/surveys/health").get_json()
    result = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                      "health", "--count", "2"])
    assert result.exit_code == 0, result.output
    after = client.get("/api/surveys/health").get_json()
    assert "invite_carries" not in after and after == {**before, "invite_only": True}
    code = result.stdout.split()[0]
    asked = client.post("/api/surveys/health/invitation", json={"invite": code})
    assert asked.status_code == 200 and asked.get_json() == {"carries": {}}


def test_the_export_without_carry_gives_plain_codes_keyed_by_interview(
        db_path: Any, tmp_path: Path, client: Any) -> None:
    result = create(db_path, write(tmp_path, EXPORT))
    assert result.exit_code == 0, result.output
    assert list(printed(result)) == ["uuid:1a", "uuid:2b", "uuid:3c"]
    assert sql(db_path, "SELECT count(*) FROM invites WHERE carried IS NULL") == [(3,)]
    assert "invite_carries" not in client.get("/api/surveys/health").get_json()


def test_the_odk_csv_holds_each_interview_s_code_and_link(db_path: Any, tmp_path: Path) -> None:
    links = tmp_path / "links.csv"
    result = create(db_path, write(tmp_path, EXPORT), "--carry", CARRY, "--links",
                    "https://survey.example.org", "--odk-csv", str(links))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # written to the file only
    rows = list(csv.DictReader(links.open(encoding="utf-8")))
    assert [r["key"] for r in rows] == ["uuid:1a", "uuid:2b", "uuid:3c"]
    for row in rows:
        assert row["link"] == f"https://survey.example.org/s/health#invite={row['code']}"
    assert sql(db_path, "SELECT count(*) FROM invites") == [(3,)]


def test_the_invitation_endpoint_refuses_what_is_not_one_code(client: Any) -> None:
    url = "/api/surveys/health/invitation"
    unknown = client.post(url, json={"invite": "inv_" + "A" * 22})
    assert unknown.status_code == 404 and unknown.get_json()["error"]["code"] == "not_found"
    for body in ({}, {"invite": 5}, {"invite": "x" * 65}, {"invite": "inv_a", "more": 1}):
        response = client.post(url, json=body)
        assert response.status_code == 422, body
        assert "error" in response.get_json()


BAD = {
    "no key column": (EXPORT.replace(",KEY\n", ",ID\n", 1), CARRY, "no column 'KEY'"),
    "no carried column": (EXPORT, "hh-region,district", "no column 'district'"),
    "the key carried": (EXPORT, "hh-region,KEY", "names the key column 'KEY'"),
    "a key twice": (EXPORT.replace("uuid:2b\n", "uuid:1a\n"), CARRY, "'uuid:1a' again"),
    "an empty value": (EXPORT.replace(",south,", ",,"), CARRY, "line 3: empty 'hh-region'"),
    "a long value": (EXPORT.replace(",south,", "," + "s" * 101 + ","), CARRY,
                     "longer than 100 characters"),
    "a short row": (EXPORT + "2026-11-03,x,north\n", CARRY, "line 5: 3 fields"),
    "a column named twice": (EXPORT, "hh-region,hh-region", "names a column twice"),
    "a name that is no name": (EXPORT, "hh-region,1 x", "'1 x' is not a column name"),
    "too many columns": (EXPORT, ",".join(f"c{i}" for i in range(9)), "at most 8 columns"),
    "a carried question": (EXPORT.replace("hh-region", "smoker"), "smoker",
                           "'smoker' is a question of survey 'health'"),
    "no rows": (EXPORT.split("\n")[0] + "\n", CARRY, "no interview rows"),
    "an identifier": (
        EXPORT.split("\n")[0] + "\n" + "".join(f"d,s,r{i},a,n,p,u{i},u{i}\n" for i in range(201)),
        CARRY, "'hh-region' has 201 different values"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_export_is_one_line_and_stores_nothing(db_path: Any, tmp_path: Path,
                                                     case: str) -> None:
    text, carry, message = BAD[case]
    before = snapshot(db_path)
    result = create(db_path, write(tmp_path, text), "--carry", carry)
    assert result.exit_code != 0
    assert message in result.output and len(result.output.strip().splitlines()) == 1, \
        result.output
    assert snapshot(db_path) == before


def test_a_file_that_is_not_utf8_or_an_odk_csv_that_exists_stores_nothing(
        db_path: Any, tmp_path: Path) -> None:
    before = snapshot(db_path)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(EXPORT.replace("Fatou", "Fatoù").encode("latin-1"))
    result = create(db_path, latin, "--carry", CARRY)
    assert result.exit_code != 0 and "not UTF-8" in result.output
    links = write(tmp_path, "keep me\n", "links.csv")
    result = create(db_path, write(tmp_path, EXPORT), "--carry", CARRY, "--links",
                    "https://survey.example.org", "--odk-csv", str(links))
    assert result.exit_code != 0 and "links.csv exists" in result.output
    assert links.read_text() == "keep me\n"
    result = create(db_path, write(tmp_path, EXPORT), "--carry", CARRY, "--odk-csv",
                    str(tmp_path / "new.csv"))
    assert result.exit_code != 0 and "give --links URL" in result.output
    assert not (tmp_path / "new.csv").exists()
    assert snapshot(db_path) == before


def test_every_code_of_a_survey_carries_the_same_columns(db_path: Any, tmp_path: Path) -> None:
    export = write(tmp_path, EXPORT)
    assert create(db_path, export, "--carry", CARRY).exit_code == 0
    before = snapshot(db_path)
    other = create(db_path, export, "--carry", "hh-region")
    assert other.exit_code != 0 and "carry hh-region, hh-age_band" in other.output
    plain = CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                     "health", "--count", "1"])
    assert plain.exit_code != 0 and "carry hh-region, hh-age_band" in plain.output
    assert snapshot(db_path) == before
    more = create(db_path, write(tmp_path, EXPORT.replace("uuid:", "uuid:second-"), "m2.csv"),
                  "--carry", CARRY)
    assert more.exit_code == 0, more.output


def test_carried_codes_are_refused_beside_plain_ones(db_path: Any, tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["invites", "create", "--db", str(db_path), "--survey",
                                    "health", "--count", "1"]).exit_code == 0
    before = snapshot(db_path)
    result = create(db_path, write(tmp_path, EXPORT), "--carry", CARRY)
    assert result.exit_code != 0 and "1 invitation code(s) that carry no values" in result.output
    assert snapshot(db_path) == before


# --- report --by and regress on a carried covariate ---------------------------------------

Z = 5.0  # two-sided normal tail 5.7e-7 per comparison; 4 comparisons: false alarm < 3e-6
TRUTH = {"north": 0.2, "south": 0.6}  # share of smokers by region
PER_REGION = 1500


def _rr_sd(pi: float, n: int, epsilon: float = 1.0) -> float:
    """The s.d. of binary randomized response's unbiased share: a 'yes' is reported with
    probability λ = π q + (1 − π)(1 − q), q = e^ε/(1 + e^ε), and π̂ = (λ̂ − (1 − q))/(2q − 1),
    so Var π̂ = λ(1 − λ) / (n (2q − 1)²)."""
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    lam = pi * q + (1 - pi) * (1 - q)
    return math.sqrt(lam * (1 - lam) / n) / (2 * q - 1)


def _field(db_path: Any, tmp_path: Path, client: Any) -> None:
    """PER_REGION respondents per region answer with their region's share of smokers."""
    import secrets

    rows = [f"k{i},{region}" for region in TRUTH for i in range(len(TRUTH) * PER_REGION)
            if i // PER_REGION == list(TRUTH).index(region)]
    result = CliRunner().invoke(cli, [
        "invites", "create", "--db", str(db_path), "--survey", "health", "--from-export",
        str(write(tmp_path, "KEY,region\n" + "\n".join(rows) + "\n")), "--key", "KEY",
        "--carry", "region"])
    assert result.exit_code == 0, result.output
    region_of = dict(row.split(",") for row in rows)
    items = []
    for key, code in printed(result).items():
        truth = secrets.randbelow(10**6) < TRUTH[region_of[key]] * 10**6
        items.append(submission({"smoker": truth, "color": "red"}, invite=code))
    for start in range(0, len(items), 100):
        response = client.post(URL, json={"submissions": items[start:start + 100]})
        assert response.status_code == 200, response.get_json()


@pytest.mark.backends("sqlite")
def test_report_by_a_carried_covariate_estimates_each_region_s_share(
        db_path: Any, tmp_path: Path, client: Any) -> None:
    _field(db_path, tmp_path, client)
    result = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "health",
                                      "--by", "region", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["by"] == "region" and document["carried"] is True
    groups = {g["value"]: g for g in document["subgroups"]}
    assert set(groups) == set(TRUTH)
    for region, share in TRUTH.items():
        assert groups[region]["n"] == PER_REGION
        smoker = next(q for q in groups[region]["questions"] if q["question"] == "smoker")
        estimate = {c["value"]: c["estimate"] for c in smoker["categories"]}[True]
        assert abs(estimate - share) < Z * _rr_sd(share, PER_REGION), (region, estimate)
    table = CliRunner().invoke(cli, ["report", "--db", str(db_path), "--survey", "health",
                                     "--by", "region"])
    assert table.exit_code == 0 and "invitation code carried 'region'" in table.stdout
    # regress: the log odds ratio south vs north, against its own standard error.
    fit = CliRunner().invoke(cli, ["regress", "--db", str(db_path), "--survey", "health",
                                   "--outcome", "smoker", "--covariates", "region",
                                   "--format", "json"])
    assert fit.exit_code == 0, fit.output
    coefficients = {c["name"]: c for c in json.loads(fit.stdout)["coefficients"]}
    south = coefficients["region=south"]
    truth = math.log(0.6 / 0.4) - math.log(0.2 / 0.8)
    assert abs(south["estimate"] - truth) < Z * south["std_error"], south
