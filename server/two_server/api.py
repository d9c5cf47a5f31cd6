"""The leader's two-server routes.

    POST /api/surveys/<id>/two-server/uploads                 (public: a device's upload)
    POST /api/surveys/<id>/two-server/aggregate               (token: batch + run jobs now)
    GET  /api/surveys/<id>/two-server/batches                 (token)
    POST /api/surveys/<id>/two-server/batches/<batch>/collect (token: the noisy sums)

`init_leader(app)` attaches the leader (its HPKE key from config HPKE_KEY, tables in the same
database) and, with AGGREGATE_EVERY > 0 seconds, a background thread that runs the
aggregation of every open two-server survey periodically (a down helper is retried then).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from flask import Blueprint, Flask, current_app, request
from ldpsurvey.shared.two_server.hpke import load_private_key, public_bytes

from ..auth import check_authorization
from ..common.jsonbody import json_object
from ..common.two_server.db import TwoServerDb
from ..common.two_server.errors import HelperUnavailable
from ..http_request import current_store
from . import leader

LEADER_EXTENSION = "ldpsurvey.leader"
log = logging.getLogger("ldpsurvey.server")
bp = Blueprint("two_server", __name__)


def _leader() -> leader.Leader:
    return current_app.extensions[LEADER_EXTENSION]


def init_leader(app: Flask) -> None:
    path = app.config.get("HPKE_KEY")
    key = load_private_key(path) if path else None
    app.extensions[LEADER_EXTENSION] = leader.Leader(
        db=TwoServerDb(app.config["DATABASE"]), store=current_store_of(app), private_key=key,
        public_key=public_bytes(key) if key is not None else None,
        helper_token=app.config.get("HELPER_TOKEN"))
    app.register_blueprint(bp)
    every = float(app.config.get("AGGREGATE_EVERY") or 0)
    if every > 0:
        threading.Thread(target=_loop, args=(app.extensions[LEADER_EXTENSION], every),
                         name="two-server-aggregation", daemon=True).start()


def current_store_of(app: Flask) -> Any:
    from ..http_request import STORE_EXTENSION

    return app.extensions[STORE_EXTENSION]


def _loop(state: leader.Leader, every: float) -> None:
    stop = threading.Event()
    while not stop.wait(every):
        for survey_id in sorted({r.id for r in state.store.list_surveys()}):
            try:
                leader.aggregate(state, survey_id)
            except HelperUnavailable:
                continue  # retried on the next tick
            except Exception as exc:
                log.debug("two-server aggregation of %s: %s", survey_id, exc)


def _analyst() -> None:
    check_authorization(current_store(), request.headers.get("Authorization"))


@bp.post("/api/surveys/<survey_id>/two-server/uploads")
def upload(survey_id: str) -> tuple[dict[str, Any], int]:
    result, created = leader.accept_upload(_leader(), survey_id, json_object(request))
    return result, 201 if created else 200


@bp.post("/api/surveys/<survey_id>/two-server/aggregate")
def aggregate(survey_id: str) -> dict[str, Any]:
    _analyst()
    return leader.aggregate(_leader(), survey_id)


@bp.get("/api/surveys/<survey_id>/two-server/batches")
def batches(survey_id: str) -> dict[str, Any]:
    _analyst()
    listing = leader.list_batches(_leader(), survey_id)
    return {"survey": survey_id, **listing[0], "batches": listing[1:]}


@bp.post("/api/surveys/<survey_id>/two-server/batches/<batch_id>/collect")
def collect(survey_id: str, batch_id: str) -> dict[str, Any]:
    _analyst()
    batch = leader.collect(_leader(), survey_id, batch_id)
    return {**batch.to_dict(), "estimates": estimates_of(batch)}


def estimates_of(batch: Any) -> dict[str, Any]:
    """The one estimate document of a collected batch (`estimate_batch`): every question, every
    declared crosstab and the guarantees in plain words, as `report --batch` renders them."""
    from ldpsurvey.shared.two_server.estimates import estimate_batch

    from .. import surveys

    record = surveys.get(current_store(), batch.survey_id, batch.version)
    return estimate_batch(leader.survey_of(record), batch)
