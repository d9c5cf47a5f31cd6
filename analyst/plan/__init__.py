"""Planning a survey: the respondents a margin of error needs, or the margin n buys.

rows.py holds the rows and their arithmetic that every planner here shares; survey.py plans a
survey question by question, modes.py compares collection modes, and the rest plan one kind of
question (location, multiselect, "not asked" in skip.py) or one analysis (crosstab, regress,
composition of a survey's ε). cli.py is the `ldpsurvey plan` command, modes_cli.py its
--compare-modes output.
"""
