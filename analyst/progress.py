"""Progress for long-running CLI work, drawn only on a terminal.

click's progress bar, when stderr is not a terminal, still prints its label once: in a log or
a pipe that is a stray line (issue 17). One helper so `demo` and `simulate` behave alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click


@contextmanager
def terminal_progress(length: int, label: str, show_pos: bool = False, enabled: bool = True
                      ) -> Iterator[Callable[[int], None] | None]:
    """Yields `update(steps)` drawing a bar on stderr when it is a terminal (and `enabled`:
    short work needs no bar), else None."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr,
                           show_pos=show_pos) as bar:
        yield bar.update
