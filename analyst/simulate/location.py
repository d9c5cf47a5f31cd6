"""The built-in truth for simulating a location question: people cluster (the location unit's
`cluster_weights`, shared/question_types/location.py: two Gaussian clusters on the grid, so
regions differ and many cells are nearly empty, as real places are).
"""

from __future__ import annotations

from ldpsurvey.shared.question_types.location import LocationType

location_weights = LocationType.cluster_weights  # P(cell) over the grid, row-major

__all__ = ["location_weights"]
