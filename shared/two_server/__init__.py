"""The two-server (central DP) collection mode: Prio3 shares aggregated by a leader and a helper,
each adding its own geometric noise before release (issue 18)."""
