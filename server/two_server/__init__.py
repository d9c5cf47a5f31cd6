"""The leader's side of the two-server mode: uploads, batches, aggregation jobs, collection."""
