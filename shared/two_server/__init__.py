"""The two-server (central DP) collection mode of issue 18: Prio3 shares aggregated by a leader
and a helper, each adding its own geometric noise before release.

config (declaration), hpke (sealing shares), encoding/vdaf (answers as Prio3 measurements),
upload, aggregate and results are the protocol's; noise, estimates (with entry, among_asked,
asked_pair, multiselect), guarantees and plans are the noise calibration and estimators. Which
measurement a question takes is its type's (the two-server section of shared/question_types);
nothing here names a question type. Prio3 itself is `ldpsurvey.shared.prio3`.
"""
