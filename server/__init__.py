"""The aggregator: HTTP API, storage, aggregation and analyst reports. It never sees a true answer."""
