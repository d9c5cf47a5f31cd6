// A two-server survey's declared crosstabs as its uploads and the ε limit see them: each is a
// key of its own in an upload and a noisy release of its own. Kept apart from upload.js (which
// brings Prio3 and HPKE) because the page's trust checks need them for every two-server survey
// and load nothing else of the two-server code statically (optional.js).

export const crosstabKey = (spec) => `crosstab:${spec.rows}:${spec.cols}`;

export const questionOf = (survey, id) => survey.questions.find((q) => q.id === id);

/** The declared crosstabs an upload measures (both questions answered), each with its central
 * ε: the smaller of its two questions' (shared/two_server/plans.py crosstab_epsilon). */
export function crosstabsSent(survey, answered) {
  return (survey.crosstabs || []).filter((spec) => answered.has(spec.rows) && answered.has(spec.cols))
    .map((spec) => [spec, Math.min(questionOf(survey, spec.rows).central_epsilon,
                                   questionOf(survey, spec.cols).central_epsilon)]);
}
