"""docs/skip-logic.md "Try it" runs as written (the drug-use sample: a check-all-that-apply
question and two follow-ups, a real server, two respondents from the CLI, the report), and the
server stores reports of the same shape for both respondents whatever they answered."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

from ldpsurvey.analyst.demo import running_server
from support.skip import report_shape
from support.timeouts import TEST_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
SERVE = re.compile(r"\.venv/bin/ldpsurvey serve --db (\S+) --port 8000 &")


def try_it_lines() -> list[str]:
    doc = (ROOT / "docs" / "skip-logic.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", doc.split("## Try it", 1)[1], re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def test_the_skip_logic_tutorial_runs_as_written(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / ".venv").symlink_to(Path(sys.prefix))
    (scratch / "shared").symlink_to(ROOT / "shared")
    outputs: list[str] = []
    url = None
    with ExitStack() as stack:
        for line in try_it_lines()[1:]:
            serve = SERVE.fullmatch(line)
            if serve:
                url = stack.enter_context(running_server(scratch / serve.group(1), 2))
                continue
            if line.startswith("kill "):
                continue
            assert url is not None or "8000" not in line
            line = line.replace("http://127.0.0.1:8000", url or "")
            done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True,
                                  text=True, timeout=TEST_TIMEOUT)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            outputs.append(done.stdout)
    text = "\n".join(outputs)
    assert "k=4 + 'not asked'" in text  # plan: the follow-up among those asked
    assert "still sends a randomized ‘not asked’" in text  # the second respondent's review
    assert "among those asked:" in text and "cannabis" in text  # the report
    db = sqlite3.connect(scratch / "survey.db")
    try:
        rows = [json.loads(r[0]) for r in db.execute("SELECT reports FROM submissions")]
    finally:
        db.close()
    assert len(rows) == 2
    shapes = [{qid: report_shape(r) for qid, r in row.items()} for row in rows]
    assert shapes[0] == shapes[1]
    assert set(shapes[0]) == {"substances", "cannabis_frequency", "days_used"}
