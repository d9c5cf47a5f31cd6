"""The two-server protocol once on PostgreSQL: leader and helper each in their own database
of a throwaway server (tests/support/postgres.py); skipped outside CI without one."""

from __future__ import annotations

import pytest
from support.clients import http_json
from support.postgres import shared_server
from support.two_server import start_pair
from two_server.test_protocol import ANSWERS, aggregate_and_collect, answer, publish


@pytest.fixture
def pg_pair(tmp_path):
    pg = shared_server()
    leader_db, helper_db = pg.create_database(), pg.create_database()
    pair = start_pair(tmp_path, leader_db=leader_db, helper_db=helper_db)
    yield pair
    pair.stop()
    pg.drop_database(leader_db)
    pg.drop_database(helper_db)


def test_end_to_end_on_postgresql(pg_pair, tmp_path):
    pair = pg_pair
    publish(pair, "pg")
    for i, answers in enumerate(ANSWERS * 2):
        r = answer(pair, tmp_path, "pg", answers, f"p{i}")
    # a resend of the same stored upload is a duplicate, not a second report
    [receipt] = r.outbox.all_receipts()
    again = http_json("POST", pair.leader.url + "/api/surveys/pg/two-server/uploads",
                      receipt["body"])
    assert again["duplicate"] is True
    [batch] = aggregate_and_collect(pair, "pg")
    e = batch["entries"]
    assert e["smoker"]["n"] == 10 and e["smoker"]["noisy_sums"] == [6]
    assert e["mood"]["noisy_sums"] == [2, 2, 4, 2]
