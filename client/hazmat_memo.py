"""HAZMAT: the per-device memoization secret, and code that touches true answers.

Longitudinal surveys (a `series`) use RAPPOR's permanent randomized response: the same true
answer to the same question of the same series must always give the same permanent randomized
value, or a server could average rounds and recover the answer. Instead of storing the value,
it is re-derived each round by running the question's own exact sampler with a deterministic
random source: HMAC-SHA256 keyed by a 32-byte device secret (os.urandom), over
(series, question id, canonical answer, mechanism name and parameters), in counter mode, with
rejection sampling for `randbelow`. Without the secret the stream is indistinguishable from
uniform, so a permanent value is distributed exactly as the mechanism's channel says. A
mechanism that rounds before it randomizes (one_bit_mean's α-point, `series_answer`) draws its
rounding point from a stream over (series, question id, mechanism name and parameters) alone,
so the point is the same every round and the memo keys on the rounded answer.

Handle with care: anyone holding the device secret can recompute which permanent value (and
which ledger tag) each possible answer gives, and so learn the true answers behind reports
and ledger entries. The secret lives in the state directory, mode 0600; never copy it off the
device, never log it, and never use this stream for anything that is not a permanent value.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from ldpsurvey.shared.mechanisms.base import Mechanism
from ldpsurvey.shared.survey import canonical_json

from .errors import StateError
from .state import StateDir, atomic_write

SECRET_FILE = "hazmat-device-secret"  # noqa: S105 (a file name, not a secret)
SECRET_BYTES = 32
_PERMANENT = b"ldpsurvey/permanent-value/v1\0"
_TAG = b"ldpsurvey/ledger-tag/v1\0"
_SERIES_ANSWER = b"ldpsurvey/series-answer/v1\0"


class HmacSource:
    """A deterministic `RandomSource`: HMAC-SHA256(key, message || counter) blocks.

    `randbelow(n)` takes just enough bits for n - 1 and rejects draws >= n, so it is exactly
    uniform given a uniform stream.
    """

    def __init__(self, key: bytes, message: bytes) -> None:
        self._key = key
        self._message = message
        self._counter = 0
        self._buffer = b""

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = self._message + self._counter.to_bytes(8, "big")
            self._buffer += hmac.new(self._key, block, hashlib.sha256).digest()
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        mask = (1 << bits) - 1
        while True:
            value = int.from_bytes(self._take((bits + 7) // 8), "big") & mask
            if value < n:
                return value


class Memoizer:
    """Permanent randomized values and ledger tags for true answers in a series."""

    def __init__(self, state: StateDir) -> None:
        self.state = state

    def _secret(self) -> bytes:
        path = self.state.path / SECRET_FILE
        with self.state.lock():
            try:
                secret = path.read_bytes()
            except FileNotFoundError:
                secret = os.urandom(SECRET_BYTES)
                atomic_write(path, secret)
            except OSError as exc:
                raise StateError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if len(secret) != SECRET_BYTES:
            raise StateError(f"{path} is damaged (expected {SECRET_BYTES} bytes); "
                             f"refusing to memoize with it")
        return secret

    def _series_answer(self, mechanism: Mechanism, series: str, question_id: str,
                       answer: Any) -> Any:
        """What the memo keys on for `answer` (`Mechanism.series_answer`: the answer itself,
        or one_bit_mean's end at its α-point), from the question's own keyed stream: HMAC over
        (series, question id, mechanism name and parameters), never the answer, so the same
        draw every round."""
        layer = mechanism.permanent_layer
        layer.encode(answer)  # refuse an invalid answer before deriving anything from it
        if type(layer).series_answer is Mechanism.series_answer:
            return answer  # the answer itself, nothing drawn: the secret is not read for it
        source = HmacSource(self._secret(), _SERIES_ANSWER + canonical_json(
            [series, question_id, layer.name, layer.params()]))
        return layer.series_answer(answer, source)

    @staticmethod
    def _message(domain: bytes, mechanism: Mechanism, series: str, question_id: str,
                 answer: Any) -> bytes:
        layer = mechanism.permanent_layer
        if hasattr(layer, "canonical"):  # a set (multiselect): its labels in the options' order
            answer = layer.canonical(answer)
        return domain + canonical_json([series, question_id, answer, layer.name, layer.params()])

    def permanent_value(self, mechanism: Mechanism, series: str, question_id: str,
                        answer: Any) -> Any:
        """The memoized permanent report: identical for the same answer every round."""
        layer = mechanism.permanent_layer
        answer = self._series_answer(mechanism, series, question_id, answer)
        source = HmacSource(self._secret(),
                            self._message(_PERMANENT, mechanism, series, question_id, answer))
        return layer.perturb(answer, source=source)

    def report(self, mechanism: Mechanism, series: str, question_id: str, answer: Any) -> Any:
        """This round's report: the permanent value, re-randomized if there is a second layer."""
        value = self.permanent_value(mechanism, series, question_id, answer)
        return mechanism.rerandomize(value)  # fresh OS CSPRNG noise, if there is a layer

    def answer_tag(self, mechanism: Mechanism, series: str, question_id: str,
                   answer: Any) -> str:
        """A keyed hash naming a distinct (answer, mechanism) so the ledger can charge once
        (one_bit_mean: a distinct end, so at most two charges)."""
        answer = self._series_answer(mechanism, series, question_id, answer)
        digest = hmac.new(self._secret(),
                          self._message(_TAG, mechanism, series, question_id, answer),
                          hashlib.sha256).hexdigest()
        return digest[:32]
