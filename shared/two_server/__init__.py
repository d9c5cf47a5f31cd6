"""The two-server (central-DP) collection mode of issue 18: declaration, HPKE, encoding, results.

Prio3 itself is `ldpsurvey.shared.prio3`; the noise calibration is `noise.py` (see
TWO_SERVER_CONTRACT in the branch history); the leader and helper servers live in `server/`
and `helper/`.
"""
