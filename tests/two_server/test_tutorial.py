"""docs/two-server.md "Try it" runs as written: keys, a real helper and leader (each its own
SQLite), the sample survey published, five respondents from the CLI, aggregation with proofs,
and the report of the collected batch with both guarantees."""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

from ldpsurvey.analyst.demo import running_server
from support.timeouts import TEST_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
SCRATCH = 'd="$(mktemp -d)" && ln -s "$PWD/.venv" "$PWD/shared" "$d" && cd "$d"'
HELPER = re.compile(r"\.venv/bin/ldpsurvey helper serve --db (\S+) --port 8001 (.*) &")
LEADER = re.compile(r"\.venv/bin/ldpsurvey serve --db (\S+) --port 8000 (.*) &")


def tutorial_lines() -> list[str]:
    doc = (ROOT / "docs" / "two-server.md").read_text(encoding="utf-8")
    section = doc.split("## Try it", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def _absolute(args: str, scratch: Path) -> tuple[str, ...]:
    """The server's options with its file arguments made absolute (it runs elsewhere)."""
    out: list[str] = []
    for word in args.split():
        out.append(str(scratch / word) if "/" in word and not word.startswith("-") else word)
    return tuple(out)


def test_the_two_server_tutorial_runs_as_written(tmp_path: Path) -> None:
    lines = tutorial_lines()
    assert lines[0] == SCRATCH
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / ".venv").symlink_to(Path(sys.prefix))
    (scratch / "shared").symlink_to(ROOT / "shared")
    urls: dict[str, str] = {}
    outputs: list[str] = []
    with ExitStack() as stack:
        for line in lines[1:]:
            helper, leader = HELPER.fullmatch(line), LEADER.fullmatch(line)
            if helper or leader:
                match = helper or leader
                command = ("helper", "serve") if helper else ("serve",)
                url = stack.enter_context(running_server(
                    scratch / match.group(1), 2, command=command,
                    extra_args=_absolute(match.group(2), scratch)))
                urls["http://127.0.0.1:8001" if helper else "http://127.0.0.1:8000"] = url
                continue
            if line.startswith("kill "):
                continue
            for written, real in urls.items():
                line = line.replace(written, real)
            done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True,
                                  text=True, timeout=TEST_TIMEOUT)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            outputs.append(done.stdout)
    assert len(urls) == 2, "the tutorial starts a helper and a leader"
    text = "\n".join(outputs)
    # plan and the review state both guarantees; the report is of one batch of 5 respondents
    assert text.count("If the leader and the helper collude") >= 3
    assert "Before sending" in text and "nothing has been split or sealed yet" in text
    assert "5 respondents; 0 reports rejected" in text
    assert "smoker x mood" in text
    assert (scratch / "report.html").is_file()
