"""`ldpsurvey demo --two-server`: a leader, a helper, both modes next to the truth."""

from __future__ import annotations

from ldpsurvey.analyst.demo.two_server import run_two_server_demo


def test_demo_two_server_prints_both_modes_next_to_the_truth():
    lines: list[str] = []
    table = run_two_server_demo(60, seed=3, workers=2, echo=lines.append)
    header = table.splitlines()[0].split()
    assert header == ["question", "value", "true", "local", "DP", "two-server"]
    rows = [r for r in table.splitlines()[2:]]
    assert len(rows) == 2 + 5 + 1 + 5 + 1  # yes/no, five options, a mean, five checkboxes and
    # the mean number selected
    for row in rows:
        assert row.count("±") == 2, row  # an estimate in each mode
    assert any("leader:" in line and "helper:" in line for line in lines)
