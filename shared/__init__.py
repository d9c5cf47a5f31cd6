"""What the respondent's device and the aggregator must agree on: surveys, mechanisms, wire format."""
