"""Respondent-client throughput: randomizing, memoizing, and durable submit to a real server.

Prints numbers, asserts nothing. Run: .venv/bin/python bench/bench_client.py [--n 300]
Each submit charges the ledger and writes the outbox (atomic, fsync'd) before the POST, then a
receipt: the durable path a real device takes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ldpsurvey.client import Respondent
from ldpsurvey.shared.survey import Survey
from support.clients import RealServer, survey_dict

ANSWERS = {"smoker": True, "mood": "fine", "drinks": 3}


def rate(n: int, fn: object) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)  # type: ignore[operator]
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    n = parser.parse_args().n
    root = Path(tempfile.mkdtemp(prefix="bench-client-"))
    plain = Survey.from_dict(survey_dict())
    layered = survey_dict(series="weekly")
    for q in layered["questions"][:2]:
        q["instantaneous_epsilon"] = 0.5
    series = Survey.from_dict(layered)
    r = Respondent("http://127.0.0.1:9", state_dir=str(root / "offline"))
    print(f"answer() plain (3 questions, OS CSPRNG):     "
          f"{rate(n, lambda i: r.answer(plain, ANSWERS)):8.0f} submissions/s")
    print(f"answer() series (HMAC memo + instantaneous): "
          f"{rate(n, lambda i: r.answer(series, ANSWERS)):8.0f} submissions/s")

    server = RealServer(root / "server.db")
    server.start()
    try:
        token = server.token()
        key = Ed25519PrivateKey.generate()
        for version in range(1, n + 1):
            server.publish(survey_dict(version=version), key, token)
        online = Respondent(server.url, state_dir=str(root / "online"))
        surveys = [Survey.from_dict(survey_dict(version=v)) for v in range(1, n + 1)]
        per_s = rate(n, lambda i: online.submit(online.answer(surveys[i], ANSWERS)))
        print(f"answer()+submit() durable, real server:      {per_s:8.0f} submissions/s "
              f"(one device, sequential, loopback)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
