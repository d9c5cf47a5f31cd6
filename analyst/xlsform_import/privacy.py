"""A question's privacy from the `ldp_*` columns: disclosed, or ε and mechanism (the central
and local ε in two-server mode), with `--epsilon` for rows that state none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cells import flag, positive
from .errors import FIX, Refusal

_CELLS = "ldp_* cells"
NO_EPSILON = "rows without ε"  # the topic of rows one --epsilon fixes


def privacy(cells: Mapping[str, Any], two_server: bool, default_epsilon: float | None
            ) -> dict[str, Any]:
    """The question keys (disclosed, epsilon, central_epsilon, local_epsilon, mechanism) of a
    row; Refusal for cells that contradict each other or the collection mode."""
    disclosed = flag(cells.get("ldp_disclosed"), "ldp_disclosed")
    eps = positive(cells.get("ldp_epsilon"), "ldp_epsilon")
    local = positive(cells.get("ldp_local_epsilon"), "ldp_local_epsilon")
    central = positive(cells.get("ldp_central_epsilon"), "ldp_central_epsilon")
    mechanism = str(cells.get("ldp_mechanism") or "").strip() or None
    if disclosed:
        return _disclosed(eps, mechanism, local, central)
    if two_server:
        return _two_server(eps, mechanism, local, central, default_epsilon)
    return _local(eps, mechanism, local, central, default_epsilon)


def _disclosed(eps: float | None, mechanism: str | None, local: float | None,
               central: float | None) -> dict[str, Any]:
    for key, value in (("ldp_epsilon", eps), ("ldp_mechanism", mechanism),
                       ("ldp_local_epsilon", local), ("ldp_central_epsilon", central)):
        if value is not None:
            raise Refusal(FIX, f"a disclosed row has no {key}: its answer is sent "
                          "as given", f"clear {key} or ldp_disclosed", _CELLS)
    return {"disclosed": True}


def _two_server(eps: float | None, mechanism: str | None, local: float | None,
                central: float | None, default_epsilon: float | None) -> dict[str, Any]:
    if eps is not None:
        raise Refusal(FIX, "a two-server form states ε as ldp_central_epsilon "
                      "(each server's noise) and ldp_local_epsilon (ε0 on the "
                      "device), not ldp_epsilon", "move the value to "
                      "ldp_central_epsilon", _CELLS)
    central = central if central is not None else default_epsilon
    if central is None:
        raise Refusal(FIX, "no ε: a two-server row needs ldp_central_epsilon",
                      "fill ldp_central_epsilon, or pass --epsilon for every row "
                      "without one", NO_EPSILON)
    out: dict[str, Any] = {"central_epsilon": central}
    if local is not None:
        out["local_epsilon"] = local
    if mechanism is not None:
        out["mechanism"] = mechanism
    return out


def _local(eps: float | None, mechanism: str | None, local: float | None,
           central: float | None, default_epsilon: float | None) -> dict[str, Any]:
    """Local-DP collection (collection = ldp, the default)."""
    for key, value in (("ldp_local_epsilon", local), ("ldp_central_epsilon", central)):
        if value is not None:
            raise Refusal(FIX, f"{key} is for two-server forms", "clear it, or set "
                          "collection = two-server in settings", _CELLS)
    eps = eps if eps is not None else default_epsilon
    if eps is None:
        raise Refusal(FIX, "no ε: the row has no ldp_epsilon", "fill ldp_epsilon, or "
                      "pass --epsilon for every row without one", NO_EPSILON)
    return {"epsilon": eps, "mechanism": mechanism or "auto"}
