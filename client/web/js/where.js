// Where the survey comes from, and its document asked for early: index.html runs this module
// as an async module script, so the request (and the import of the modules it names) overlaps
// with loading the rest of the page's code (bench/bench_first_question.py). page.js awaits the
// same request; manifest.js verifies the document before anything is shown or drawn.

import { fetchSurvey } from "./api.js";
import { config } from "./config.js";
import { firstCatalogue, preferences } from "./language.js";
import { prefetch } from "./optional.js";

/** Where the survey comes from: the exported page's pinned config, or this page's own URL
 * (maxEpsilon null: manifest.js DEFAULT_MAX_EPSILON, page.js). */
export function target(cfg, loc) {
  if (cfg.server) {
    return { server: cfg.server.replace(/\/+$/, ""), surveyId: cfg.survey,
             fingerprint: cfg.fingerprint || null, maxEpsilon: cfg.maxEpsilon ?? null };
  }
  const segments = loc.pathname.split("/").filter(Boolean);
  return { server: loc.origin, surveyId: decodeURIComponent(segments.at(-1) || ""),
           fingerprint: null, maxEpsilon: null };
}

performance.mark("ldpsurvey-where");  // when this module runs (bench/bench_first_question.py)
export const where = target(config, window.location);

/** The survey document's request (fetchSurvey), made once, when this module first runs; null
 * without a survey id. Its failure is page.js's to say (when it awaits it), not an unhandled
 * rejection before then. */
export const surveyRequest = where.surveyId ? fetchSurvey(where.server, where.surveyId) : null;
surveyRequest?.then((doc) => prefetch(signedSurvey(doc), firstCatalogue(preferences())))
  .catch(() => {});

/** The survey a document's signed bytes hold, unverified (prefetch only looks at its types). */
function signedSurvey(doc) {
  const bytes = Uint8Array.from(atob(doc.signed_bytes), (c) => c.charCodeAt(0));
  const survey = JSON.parse(new TextDecoder().decode(bytes));
  if (!Array.isArray(survey?.questions)) throw new TypeError("not a survey");
  return survey;
}
