"""The words and rule names of what a question's estimates mean, in one leaf module.

The units (binary.py, ordinal.py, multiselect.py, ...) say which apply to their type; the
mechanisms that estimate a type (shared/mechanisms/set_base.py, ordinal_exp.py, disclosed.py)
and shared/estimand.py write the same strings. They sit here, importing nothing, so that a
mechanism can name them without importing the units that choose mechanisms (no import circle).
"""

from __future__ import annotations

# How the 'consistent' column of a question's option rows is made (shared/estimand.py).
NORM_SUB = "norm-sub"
CLIP = "clip"
EM = "em"

# The extra row a report shows after the option rows.
MEAN = "mean"
MEAN_SCORE = "mean score"
MEAN_SELECTED = "mean number selected"

DISCLOSED_NOTE = "disclosed: answers as respondents gave them (not randomized), counted exactly"
EM_NOTE = "'consistent' is the EM (maximum-likelihood) distribution"
SHARES_NOTE = ("each option's estimate is the share of respondents who selected it: shares "
               "need not sum to 1 (their sum is the mean number selected); 'consistent' clips "
               "each share to [0, 1]")


def score_note(k: int) -> str:
    """The note of an ordinal question's mean score."""
    return f"mean score: options scored 1..{k} in order"
