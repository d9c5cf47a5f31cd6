"""The words and rule names of what a question's estimates mean, in one leaf module.

The units (binary.py, ordinal.py, multiselect.py, ...) say which apply to their type; the
mechanisms that estimate a type (shared/mechanisms/set_base.py, ordinal_exp.py, disclosed.py)
and shared/estimand.py write the same strings. They sit here, importing nothing, so that a
mechanism can name them without importing the units that choose mechanisms (no import circle).
"""

from __future__ import annotations

from typing import Any

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


# The page's words for what a number's device sends (client/web/js/messages/<lang>/decimal.js,
# the page's decimal unit's catalogue part; an integer's mean mechanisms say them too): the
# command line says them from the catalogue where it has that part, and in these same English
# sentences where it does not (a build without the page's decimal unit).
ENGLISH_WORDS = {
    "decimal.describe": "Your device will send a number between {low} and {high} that depends "
                        "on your answer.",
    "decimal.geometric": "Your device adds random noise to your number: it stays unchanged "
                         "with probability {p}; small changes ({resolution} up or down) are "
                         "likelier than large ones, each further step {step} less likely than "
                         "the one before.",
    "decimal.pair": "Your answer is sent twice, randomized each time on its own. For the "
                    "average: {mean} For the distribution: {distribution}",
    "decimal.numbers": "the numbers {mean} (for the average) and {distribution} (for the "
                       "distribution)",
}


def say(words: Any, key: str, **params: Any) -> str:
    """The page's message `key` in the respondent's language (`words`: the units' DeviceWords),
    or its English (ENGLISH_WORDS) where the catalogue has no decimal part."""
    try:
        return words.t(key, **params)
    except KeyError:
        return ENGLISH_WORDS[key].format(**{k: str(v) for k, v in params.items()})
