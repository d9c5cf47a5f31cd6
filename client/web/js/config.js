// Where this page gets its survey. Empty when the aggregator serves the page at /s/<survey_id>:
// the survey id comes from the page's path and the server is the page's own origin.
// `ldpsurvey page export` replaces this file with the aggregator URL, the survey id and the
// pinned fingerprint of the designer's signing key.
export const config = {};
