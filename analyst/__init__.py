"""The analyst's and survey designer's side: the `ldpsurvey` command, planning, simulation,
privacy audits, estimate reports, publishing signed surveys and the demo.

Nothing here runs on a respondent's device or inside the aggregator; it talks to the
aggregator over HTTP (`remote`) or reads a store file directly (`report --db`).
"""
