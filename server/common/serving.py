"""Running the app: one waitress process, or N worker processes on one listening socket.

With `workers > 1` the parent checks the configuration, migrates the schema once (by building
the app, whose store it then closes), binds the socket and forks the workers; each builds its
own app (its own store and connections) after the fork, and the kernel hands each new
connection to one of them. The parent only supervises: a worker that dies (even by kill -9) is
replaced, and SIGTERM/SIGINT stops them all. Workers share nothing but the database, so this
is only useful with PostgreSQL (SQLite takes one writer at a time anyway); the same stateless
processes can also run on several hosts (docs/postgresql.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("ldpsurvey.server")
BACKLOG = 1024
QUICK_DEATH_S = 2.0  # a worker that dies this soon after starting is restarted after a pause
AppFactory = Callable[[Mapping[str, Any]], Any]  # config -> the WSGI app one worker serves


def body_cap(app: Any) -> int:
    """Waitress buffers a body before the app sees it: cap it near the app's own 413 limit."""
    return 2 * int(app.config["MAX_CONTENT_LENGTH"]) + 65536


def listen(host: str, port: int) -> socket.socket:
    """The listening socket (OSError when the address is taken or not available)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=BACKLOG)


def listen_or_exit(host: str, port: int) -> socket.socket:
    """The listening socket, or a one-line CLI error: bound before anything (a database file)
    is created, so a busy port fails first."""
    import click

    try:
        return listen(host, port)
    except OSError as exc:  # port in use, address not available, ...
        raise click.ClickException(f"cannot listen on {host}:{port}: "
                                   f"{exc.strerror or exc}") from None


def serve_forever(app: Any, sock: socket.socket, threads: int, ident: str) -> None:
    """One waitress process on `sock` until interrupted (the aggregator's and the helper's)."""
    import waitress

    server = waitress.create_server(app, sockets=[sock], threads=threads,
                                    max_request_body_size=body_cap(app), ident=ident)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def _worker(sock: socket.socket, config: Mapping[str, Any], threads: int,
            create_app: AppFactory) -> None:
    import waitress

    app = create_app(config)
    server = waitress.create_server(app, sockets=[sock], threads=threads,
                                    max_request_body_size=body_cap(app), ident="ldpsurvey")
    server.run()


def supervise(sock: socket.socket, config: Mapping[str, Any], threads: int, workers: int,
              echo: Callable[[str], None], create_app: AppFactory) -> None:
    """Fork `workers` processes serving `sock`; replace any that dies until told to stop.
    Each worker builds its app with `create_app(config)` (the aggregator's: passed in, so that
    this module, which the helper imports too, depends on no server module)."""
    children: dict[int, float] = {}  # pid -> start time
    stopping = False

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 0
            try:
                _worker(sock, config, threads, create_app)
            except BaseException:
                log.exception("worker %d failed", os.getpid())
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        children[pid] = time.monotonic()

    def stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for _ in range(workers):
        spawn()
    echo(f"{workers} worker processes: {' '.join(str(p) for p in sorted(children))}")
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        started = children.pop(pid, None)
        if not stopping:
            log.warning("worker %d ended (%s); starting another", pid,
                        os.waitstatus_to_exitcode(status))
            if started is not None and time.monotonic() - started < QUICK_DEATH_S:
                time.sleep(1.0)  # e.g. the database is down: do not fork in a tight loop
            spawn()
