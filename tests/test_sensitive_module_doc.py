"""docs/sensitive-module.md's XLSForm: the same rows as tests/data/sensitive_module_form.md,
which pyxform (what ODK Central and KoboToolbox run on an uploaded form) converts into an XForm
that reads each interview's link from the attached links.csv with pulldata. The walk-through's
commands and the page opened from the link run in tests/web/test_sensitive_module_walkthrough.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from pyxform.xls2xform import convert

ROOT = Path(__file__).resolve().parents[1]
FORM = ROOT / "tests" / "data" / "sensitive_module_form.md"


def test_the_doc_shows_the_tested_form() -> None:
    doc = (ROOT / "docs" / "sensitive-module.md").read_text(encoding="utf-8")
    assert re.findall(r"```md\n(.*?)```", doc, re.S) == [FORM.read_text(encoding="utf-8")]


def test_pyxform_converts_the_form_into_a_pulldata_of_links_csv() -> None:
    result = convert(xlsform=str(FORM))
    assert result.warnings == []
    xform = result.xform
    # links.csv is the form's attachment, read by key: the link of the household entered
    assert '<instance id="links" src="jr://file-csv/links.csv"/>' in xform
    assert re.search(r'<bind nodeset="/data/link" type="string" '
                     r"calculate=\"pulldata\('links', 'link', 'key', +/data/hh_id +\)\"/>", xform)
    # the note shows the computed link to the enumerator, as a markdown link ODK Collect opens
    assert '[answer the private questions](<output value=" /data/link "/>)' in xform
    assert '<bind nodeset="/data/hh_id" type="string" required="true()"/>' in xform
