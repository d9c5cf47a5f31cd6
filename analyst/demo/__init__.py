"""`ldpsurvey demo`: the whole system end to end on this machine, in well under a minute
(the command is command.py; this package holds what it runs, which the two-server demo uses).

A real server (`ldpsurvey serve`, waitress, in a subprocess on a free loopback port) on a
temporary SQLite database; an analyst token and an Ed25519 signing key; the bundled sample
survey published signed; N simulated respondents, each a separate device (its own state
directory, ledger and outbox) running the real client code: `Respondent.answer` randomizes on
the device, `Respondent.submit` delivers over HTTP. Their true answers are drawn from a known
distribution (simulation only: a seeded numpy Generator picks the answers, the client's OS
CSPRNG randomizes them), so the report can be printed next to the truth.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import click
import numpy as np
from ldpsurvey.shared.errors import LdpSurveyError
from ldpsurvey.shared.survey import Question, Survey, load_survey

from ..progress import terminal_progress
from ..reports.model import Report

SAMPLE = "sensitive.toml"
SERVER_START_TIMEOUT = 30.0
SERVER_STOP_TIMEOUT = 10.0
DEFAULT_WORKERS = 4  # devices submitting at once; the server runs as many threads


class DemoError(LdpSurveyError):
    """The demo could not run: the server did not start, or submissions were refused."""

    code = "demo_failed"


@dataclass(frozen=True)
class DemoResult:
    url: str
    survey: Survey
    n_sent: int
    seconds: float
    html_path: Path
    table: str
    report: Report
    token: str = ""
    public_key: Path | None = None      # the demo's signing key pair (temporary, like the rest)
    private_key: Path | None = None
    fingerprint: str = ""
    allow_origins: tuple[str, ...] = ()

    @property
    def page_url(self) -> str:
        """The respondent web page for the demo survey on the demo server."""
        return f"{self.url}/s/{self.survey.id}"


def sample_survey() -> Survey:
    """The bundled sample survey (a binary, a categorical with a group, an integer question)."""
    resource = files("ldpsurvey.shared") / "samples" / SAMPLE
    with tempfile.TemporaryDirectory() as tmp:  # load_survey reads a path, by file type
        path = Path(tmp) / SAMPLE
        path.write_bytes(resource.read_bytes())
        return load_survey(path)


# --- the server ----------------------------------------------------------------------------


@contextmanager
def running_server(db_path: Path, threads: int = DEFAULT_WORKERS, *,
                   allow_origins: tuple[str, ...] = (),
                   command: tuple[str, ...] = ("serve",),
                   extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """`ldpsurvey serve` (or `command`, e.g. helper serve) on a free loopback port; yields its
    base URL, stops it on exit."""
    args = [*command, "--db", str(db_path), "--host", "127.0.0.1", "--port", "0",
            "--threads", str(threads), *extra_args]
    for origin in allow_origins:
        args += ["--allow-origin", origin]
    cmd = [sys.executable, "-c", _SERVE, *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,  # noqa: S603
                            text=True, env=env)
    watchdog = threading.Timer(SERVER_START_TIMEOUT, proc.kill)
    watchdog.start()
    drains: list[threading.Thread] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        watchdog.cancel()
        marker = "serving on "
        if marker not in line:
            proc.kill()
            _, err = proc.communicate(timeout=SERVER_STOP_TIMEOUT)
            raise DemoError(f"the server did not start: {(line + err).strip()[-500:]}")
        url = line.split(marker, 1)[1].split()[0].rstrip("/")
        # Drain the server's output so a chatty log can never block it on a full pipe.
        drains += [threading.Thread(target=_drain, args=(stream,), daemon=True)
                   for stream in (proc.stdout, proc.stderr)]
        for t in drains:
            t.start()
        yield url
    finally:
        watchdog.cancel()
        stop_process(proc, drains)


# A background job of a non-interactive shell starts with SIGINT ignored, and Python keeps an
# ignored SIGINT: restore Ctrl-C so `stop_process` can stop the server cleanly.
_SERVE = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
          "from ldpsurvey.analyst.cli import cli; cli(sys.argv[1:], prog_name='ldpsurvey')")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


def stop_process(proc: subprocess.Popen, readers: list[threading.Thread] | None = None) -> None:
    """Ctrl-C (waitress closes its sockets), then kill if it does not exit in time; the
    threads reading its output finish at end of file before the pipes are closed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for reader in readers or ():
        reader.join(timeout=SERVER_STOP_TIMEOUT)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


# --- setting up: token, key, publish ---------------------------------------------------------


def next_version(db_path: Path, survey: Survey) -> Survey:
    """The survey as a version the database does not hold yet (re-running on the same --db)."""
    if not db_path.exists():
        return survey
    from ldpsurvey.server import surveys
    from ldpsurvey.server.store import open_store

    store = open_store(db_path)
    try:
        stored = surveys.versions(store, survey.id)
    finally:
        store.close()
    if not stored:
        return survey
    return replace(survey, version=max(stored) + 1)


def create_token(db_path: Path) -> str:
    from ldpsurvey.server.auth import create_token as create
    from ldpsurvey.server.store import open_store

    store = open_store(db_path)
    try:
        _, plain = create(store, "demo")
    finally:
        store.close()
    return plain


@dataclass(frozen=True)
class DemoKey:
    """The demo's signing key pair and the public key's fingerprint."""

    private: Path
    public: Path
    fingerprint: str


def publish(url: str, survey: Survey, token: str, key_dir: Path) -> DemoKey:
    """Generate a signing key, sign the survey and upload it."""
    import json

    from ldpsurvey.shared.manifest import generate_keypair, load_private_key, sign_survey

    from ..remote import request_json

    key_path, pub_path = generate_keypair(key_dir)
    signed = sign_survey(survey, load_private_key(key_path))
    request_json(f"{url}/api/surveys", body=json.dumps(signed.to_dict()).encode(), token=token)
    return DemoKey(key_path, pub_path, signed.fingerprint)


# --- respondents ---------------------------------------------------------------------------


def draw_answers(survey: Survey, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """True answers as indices into each question's domain, from the built-in skewed truth."""
    from ..simulate.truth import default_truth

    return {q.id: np.asarray(default_truth(q).draw(n, rng), dtype=np.int64)
            for q in survey.questions}


def answer_value(question: Question, index: int) -> Any:
    """A domain index as the answer a respondent gives (bool, label or int; a multiselect
    answer is drawn as a row of 0/1 per option and given as the list of its labels): the
    question's unit says."""
    return question.unit.simulated_answer(question, index)


def run_respondents(url: str, survey: Survey, fingerprint: str, answers: dict[str, np.ndarray],
                    state_root: Path, workers: int = DEFAULT_WORKERS,
                    progress: Callable[[int], None] | None = None) -> int:
    """Each respondent is one device: own state dir, real answer() and submit() over HTTP.

    The manifest is fetched and verified once against the demo key (every simulated device
    would fetch the identical bytes); each device still runs its own privacy-policy check,
    ledger, outbox and delivery. Returns how many submissions the server acknowledged.
    """
    from ldpsurvey.client.respondent import Respondent

    verified = Respondent(url, state_dir=str(state_root / "fetch"),
                          trust=fingerprint).fetch_survey(survey.id)
    n = len(next(iter(answers.values())))

    def one(i: int) -> str:
        device = Respondent(url, state_dir=str(state_root / f"device-{i}"), trust=fingerprint)
        true = {q.id: answer_value(q, answers[q.id][i]) for q in survey.questions}
        delivery = device.submit(device.answer(verified, true))
        shutil.rmtree(state_root / f"device-{i}", ignore_errors=True)
        return delivery.status

    sent = 0
    failures: list[str] = []
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(one, i) for i in range(n)]
        for future in as_completed(futures):
            status = future.result()
            if status == "sent":
                sent += 1
            else:
                failures.append(status)
            if progress is not None:
                progress(1)
    finally:  # on Ctrl-C or an error, drop the devices not started yet
        pool.shutdown(wait=True, cancel_futures=True)
    if failures:
        raise DemoError(f"{len(failures)} of {n} submissions were not acknowledged "
                        f"(first: {failures[0]})")
    return sent


# --- the demo ------------------------------------------------------------------------------


def run_demo(n: int, db_path: Path | None, out_dir: Path, seed: int | None,
             workers: int = DEFAULT_WORKERS, echo: Callable[[str], None] = click.echo,
             show_progress: bool = True,
             while_serving: Callable[[DemoResult], None] | None = None,
             allow_origins: tuple[str, ...] = ()) -> DemoResult:
    """Everything `ldpsurvey demo` does; the temporary files are gone when it returns.

    `while_serving(result)`, when given, runs before the server stops (`--serve` waits there
    for Ctrl-C, so a person can answer in a browser and watch the estimates move). The
    progress bar is drawn only on a terminal: in a log it would be a stray line.
    """
    from ..reports.html import render_html
    from ..reports.simulated import truth_of
    from ..reports.sources import fetch_report
    from ..reports.table import render_table

    if n < 1:
        raise DemoError("--n must be at least 1")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DemoError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    # State directories and the temporary database on tmpfs when there is one: thousands of
    # small fsync'd files are the demo's bottleneck, and nothing here must survive.
    shm = Path("/dev/shm")  # noqa: S108 (mkdtemp below: private, unpredictable name)
    tmp = Path(tempfile.mkdtemp(prefix="ldpsurvey-demo-",
                                dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    try:
        db = db_path if db_path is not None else tmp / "demo.db"
        survey = next_version(db, sample_survey())
        rng = np.random.default_rng(seed)
        answers = draw_answers(survey, n, rng)
        started = time.perf_counter()
        with running_server(db, threads=workers, allow_origins=allow_origins) as url:
            echo(f"server: {url}  (database {db})")
            token = create_token(db)
            key = publish(url, survey, token, tmp / "keys")
            fingerprint = key.fingerprint
            echo(f"published {survey.id} v{survey.version}, signed by key {fingerprint[:16]}…; "
                 f"total epsilon per respondent {survey.total_epsilon:g}")
            echo(f"{n:,} respondents answer on their own devices "
                 "(randomized locally, sent over HTTP)…")
            with terminal_progress(n, "respondents", show_pos=True,
                                   enabled=show_progress) as update:
                sent = run_respondents(url, survey, fingerprint, answers, tmp / "devices",
                                       workers, update)
            seconds = time.perf_counter() - started
            report = fetch_report(url, survey.id, token)
            report = replace(report, truth=truth_of(survey, answers))
            table = render_table(report)
            html_path = (out_dir / f"{survey.id}-v{survey.version}-report.html").resolve()
            try:
                html_path.write_text(render_html(report), encoding="utf-8")
            except OSError as exc:
                raise DemoError(f"cannot write {html_path}: {exc.strerror or exc}") from None
            result = DemoResult(url=url, survey=survey, n_sent=sent, seconds=seconds,
                                html_path=html_path, table=table, report=report, token=token,
                                public_key=key.public, private_key=key.private,
                                fingerprint=fingerprint, allow_origins=allow_origins)
            if while_serving is not None:
                while_serving(result)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def serving_notes(result: DemoResult) -> str:
    """What `demo --serve` prints while it serves: the page, the token, the signing key and
    how to try the exported page against this server.

    An exported copy is pinned to this run's signing key and server address, and may call the
    server only from an origin it allows (--allow-origin). Both change with every run, so
    without --allow-origin the only advice that can work is: stop, rerun with the origin, then
    export; the export command is printed only when the copy can reach this server."""
    sid = result.survey.id
    lines = [f"\nAnswer the survey yourself in a browser: {result.page_url}",
             f"Estimates (analyst token {result.token}):",
             f"  ldpsurvey report --server {result.url} --survey {sid} --token {result.token}"]
    if result.allow_origins:
        copy = result.html_path.parent / "page-copy"
        lines += [f"Signing key (temporary, deleted when the demo stops): {result.private_key}",
                  f"  public key {result.public_key}, fingerprint {result.fingerprint}",
                  "The exported page (a copy you host yourself, pinned to this key and server): "
                  "while this demo runs,",
                  f"  ldpsurvey page export {sid} --server {result.url} --trust "
                  f"{result.public_key} --out {copy}",
                  *_hosting(result.allow_origins, copy)]
    else:
        lines += ["To try the exported page (a copy you host yourself, pinned to a signing key "
                  "and a server): stop this demo (Ctrl-C), rerun it with the origin you will "
                  "host the copy on,",
                  "  ldpsurvey demo --serve --allow-origin http://127.0.0.1:8081",
                  "then export with the `page export` command that run prints. A copy exported "
                  "from this run could never work: this server allows no other origin, and "
                  "every run makes a new signing key and port."]
    return "\n".join([*lines, "Serving until Ctrl-C."])


def _hosting(origins: tuple[str, ...], copy: Path) -> list[str]:
    """How to host the copy at the allowed origin: a command for a loopback one."""
    from urllib.parse import urlsplit

    for origin in origins:
        parts = urlsplit(origin)
        if parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost") and parts.port:
            return [f"  then host it at {origin} (the origin this server allows):",
                    f"  python3 -m http.server {parts.port} --bind {parts.hostname} "
                    f"--directory {copy}",
                    f"  and open {origin}/ in a browser"]
    return [f"  then host {copy}/ at {' or '.join(origins)} (the origins this server allows) "
            f"and open its index.html there"]


def serve_until_interrupted(announce: Callable[[], None]) -> None:
    """Announce, then block until Ctrl-C (or SIGTERM) while the server subprocess serves.

    The handlers go in before the announcement, so a signal sent as soon as the announcement
    is read always ends the wait cleanly (exit 0) instead of racing the handler's setup.
    """
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        announce()
        while not stop.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
