// Where the survey comes from, and its document asked for early: index.html runs this module
// as an async module script, so the request (and the import of the modules it names) overlaps
// with loading the rest of the page's code (bench/bench_first_question.py). page.js awaits the
// same request; manifest.js verifies the document before anything is shown or drawn.

import { config } from "./config.js";
import { firstCatalogue, preferences } from "./language.js";
import { moduleNamed, prefetch } from "./optional.js";

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

/** The survey's document as the page the aggregator serves carries it (server/web_page.py:
 * a JSON data block before this module's script, for this survey); null otherwise (an
 * exported page, or a block that does not parse: then the page asks its server). Verified
 * like a fetched one (manifest.js). */
function carried(surveyId) {
  const block = document.getElementById("survey-document");
  if (config.server || !block || block.dataset.survey !== surveyId) return null;
  try {
    return JSON.parse(block.textContent);
  } catch {
    return null;
  }
}

/** The survey's document: carried by the page, or its request (api.js fetchSurvey), made once,
 * when this module first runs; null without a survey id. A request's failure is page.js's to
 * say (when it awaits it), not an unhandled rejection before then. api.js is imported only to
 * ask: the page the aggregator serves carries its document and needs api.js only to send, so
 * it is not one more file before the first question (issue 40; an exported page preloads it,
 * index.html). */
const carriedDocument = where.surveyId ? carried(where.surveyId) : null;
export const surveyRequest = !where.surveyId ? null
  : carriedDocument ? Promise.resolve(carriedDocument)
    : moduleNamed("api").then(({ fetchSurvey }) => fetchSurvey(where.server, where.surveyId));
surveyRequest?.then((doc) => prefetch(signedSurvey(doc), firstCatalogue(preferences())))
  .catch(() => {});

/** The survey a document's signed bytes hold, unverified (prefetch only looks at its types). */
function signedSurvey(doc) {
  const bytes = Uint8Array.from(atob(doc.signed_bytes), (c) => c.charCodeAt(0));
  const survey = JSON.parse(new TextDecoder().decode(bytes));
  if (!Array.isArray(survey?.questions)) throw new TypeError("not a survey");
  return survey;
}
