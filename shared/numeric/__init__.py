"""Distributions of numbers under LDP: EM with smoothing over a window channel (ems.py) and the
distribution, CDF, quantiles and bins with bootstrap intervals (distribution.py)."""
