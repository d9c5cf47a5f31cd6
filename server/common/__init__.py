"""What the aggregator and the two-server helper both run, in the one place both may import.

The HTTP edge (typed errors and their mapping to JSON 4xx bodies, JSON body parsing, wire
integer checks, serving with waitress), database targets, and the two-server tables and helper
token (`two_server/`). Nothing here imports a server module outside this package, so the helper
(helper/) depends on the server through this package only (tests/test_structure.py holds it).
"""
