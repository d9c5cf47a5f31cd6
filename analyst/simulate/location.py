"""The built-in truth for simulating a location question: people cluster.

Two Gaussian clusters on the grid (a town at a third of the way across, a smaller one at two
thirds, with spreads of a sixth and a tenth of the grid), so regions differ and many cells are
nearly empty, as real places are.
"""

from __future__ import annotations

import numpy as np


def location_weights(rows: int, cols: int) -> np.ndarray:
    """P(cell) over the grid in index order (row-major)."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    r, c = (r + 0.5) / rows, (c + 0.5) / cols
    big = np.exp(-((r - 1 / 3) ** 2 + (c - 1 / 3) ** 2) / (2 * (1 / 6) ** 2))
    small = 0.6 * np.exp(-((r - 2 / 3) ** 2 + (c - 3 / 4) ** 2) / (2 * 0.1**2))
    w = big + small
    return w / w.sum()
