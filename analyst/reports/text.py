"""The plain-language explanation every human-readable report carries."""

from __future__ import annotations

EXPLANATION: tuple[tuple[str, str], ...] = (
    ("Why no answer can be read",
     "Every respondent's device randomized each answer before sending it, so no single report "
     "says what that person answered: a 'yes' may well be noise. The server only ever held "
     "these randomized reports. Because the amount of noise is known exactly, it can be "
     "subtracted on average over many reports, which is what the estimates do."),
    ("What the interval means",
     "The interval around each estimate is a confidence interval: if the same people were "
     "surveyed again and again, intervals computed this way would contain the true share (or "
     "mean) that often, at the stated confidence level, e.g. 95 times in 100. Almost all of "
     "its width comes from the privacy noise. It shrinks with the square root of the number "
     "of respondents: four times as many respondents halve it. It is about the people who "
     "answered, counted equally as if they were a simple random sample: it does not reach "
     "people who were not asked or did not answer, and does not correct for who was more "
     "likely to be invited or to respond, nor for clusters of similar respondents. For "
     "that, give the sampling design (report --weighted; docs/weights.md)."),
    ("Why an estimate can be negative",
     "An estimate subtracts the noise one expects from what was reported. When the true share "
     "is small, the random noise can fall short of its average and the estimate drops below "
     "zero. That is not an error: it says the true share is small, and the interval says how "
     "small. The 'consistent' column is the same information made easier to read: it sets "
     "negative shares to zero and lowers the others by one common amount so they sum to 100% "
     "(slightly biased, usually closer to the truth). The 'variance bound' (or s.e. bound) "
     "is the worst case over every possible truth, known before any data arrive."),
    ("The privacy budget",
     "Epsilon (ε) measures how much one answer can reveal: smaller means more noise and more "
     "privacy. A respondent who answers every question spends the sum of the questions' ε, "
     "the survey's total."),
)

NEGATIVE_TITLE = "Why an estimate can be negative"
INTERVAL_TITLE = "What the interval means"


def explanation(negative: bool, design: tuple[tuple[str, str], ...] = ()
                ) -> tuple[tuple[str, str], ...]:
    """The explanation, with the box on negative estimates only where one is shown; a
    design-based report's own interval boxes (design_view.reading_guide) replace the simple
    random sample's."""
    items = tuple(item for item in EXPLANATION if negative or item[0] != NEGATIVE_TITLE)
    if not design:
        return items
    kept = tuple(item for item in items if item[0] != INTERVAL_TITLE)
    return (kept[0], *design, *kept[1:])


def explanation_md(negative: bool, design: tuple[tuple[str, str], ...] = ()) -> str:
    return "\n\n".join(f"**{title}.** {body}" for title, body in explanation(negative, design))
