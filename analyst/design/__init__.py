"""Design-based estimation at the analyst's desk: the design file joined to the stored
reports, and the estimates, crosstabs, regressions and reports built on them."""
