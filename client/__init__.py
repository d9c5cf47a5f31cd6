"""The respondent's side: verify the survey, randomize on the device, remember, submit."""
