// Where the page gets its survey: empty when the aggregator serves it at /s/<survey_id>;
// `ldpsurvey page export` replaces this file (docs/web.md, "Two ways to host the page").
export const config = {};
