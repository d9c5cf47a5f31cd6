"""The two-server mode's pieces the leader and the helper share: their tables, their typed
errors, and the token the leader authenticates itself to the helper with."""
