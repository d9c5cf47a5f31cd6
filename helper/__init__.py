"""The helper: the second aggregator of a two-server survey (`ldpsurvey helper serve`).

It never sees an upload: the leader forwards each report's public shares, the helper's sealed
input share (which only the helper's HPKE key opens) and the leader's prep shares in an
aggregation job. The helper prepares, keeps its own aggregate share per batch, refuses replayed
reports, batches below the survey's minimum and a second collection, and adds its own noise
when a batch is collected.
"""
