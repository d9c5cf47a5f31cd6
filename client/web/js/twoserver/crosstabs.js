// A two-server survey's declared crosstabs as its uploads and the ε limit see them; apart from
// upload.js (Prio3, HPKE) because the trust checks need them for every two-server survey.

export const crosstabKey = (spec) => `crosstab:${spec.rows}:${spec.cols}`;

export const questionOf = (survey, id) => survey.questions.find((q) => q.id === id);

/** The declared crosstabs an upload measures (both questions answered), each with its central
 * ε: the smaller of its two questions' (shared/two_server/plans.py crosstab_epsilon). */
export function crosstabsSent(survey, answered) {
  return (survey.crosstabs || []).filter((spec) => answered.has(spec.rows) && answered.has(spec.cols))
    .map((spec) => [spec, Math.min(questionOf(survey, spec.rows).central_epsilon,
                                   questionOf(survey, spec.cols).central_epsilon)]);
}
