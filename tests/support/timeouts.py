"""One generous timeout for everything a test waits on (a subprocess, an HTTP answer, a server
starting): the suite runs on loaded 2-core machines, where a short wait fails at random.

A test that times out is a hung test, not a slow one, so the bound can be wide without making
any passing run slower. LDPSURVEY_TEST_TIMEOUT overrides it (seconds).
"""

from __future__ import annotations

import os

TEST_TIMEOUT: float = float(os.environ.get("LDPSURVEY_TEST_TIMEOUT", "120"))
