"""The respondent's device: verify a survey, randomize answers locally, remember, deliver.

`Respondent` is the Python API; `ldpsurvey respond|receipts|outbox` the commands.
"""

from .respondent import Respondent, Submission, flush_outbox
from .transport import RetryPolicy
from .trust import VerifiedSurvey

__all__ = ["Respondent", "RetryPolicy", "Submission", "VerifiedSurvey", "flush_outbox"]
