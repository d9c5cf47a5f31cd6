"""Simulated surveys: truthful answers drawn, randomized, estimated and compared with the truth.

truth.py holds what answers are drawn from, results.py what a simulation gives; survey.py runs a
survey question by question, and the rest simulate one kind of question (multiselect, location,
skip logic in skip.py) or one analysis (crosstab). cli.py is the `ldpsurvey simulate` command.
"""
