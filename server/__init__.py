"""The aggregator: HTTP API, storage, aggregation, analyst reports. It never sees a true answer."""
