"""What the device and the aggregator must agree on: surveys, mechanisms, wire format."""
