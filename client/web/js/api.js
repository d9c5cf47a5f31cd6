// The two calls the page makes to the aggregator: read a survey, send a submission.
// No cookies, no referrer; the page's CSP allows connections to this one server only.

import { Worded } from "./i18n.js";

const OPTIONS = { credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" };

/** The network failed or the server had a transient error: try again later. */
export class Unreachable extends Worded {
  constructor(key, params) {
    super(key, params);
    this.name = "Unreachable";
  }
}

/**
 * The server is up, but the browser would not let this page read its answers: the page is on
 * an origin the server does not allow (`ldpsurvey serve --allow-origin`). Retrying is useless
 * until the operator fixes that; a stored submission stays pending meanwhile.
 */
export class CorsRefused extends Unreachable {
  constructor(server) {
    super("net.cors", { server, origin: window.location.origin });
    this.name = "CorsRefused";
    this.server = server;
  }
}

/** The server answered 4xx: it refused, and resending the same bytes will not help. */
export class Refused extends Error {
  constructor(message, status, error) {
    super(message);
    this.name = "Refused";
    this.status = status;
    this.error = error;
  }
}

export function surveyUrl(server, surveyId, tail = "") {
  return `${server}/api/surveys/${encodeURIComponent(surveyId)}${tail}`;
}

/**
 * Why a fetch failed without an answer. The browser reports a CORS refusal and a network
 * failure alike (a TypeError), so: offline if the browser says so; otherwise a no-cors GET of
 * the same URL, whose (opaque) answer the page cannot read but which arrives only if the
 * server is reachable: then the server answered and only CORS stood in the way.
 */
async function whyUnreachable(url) {
  if (navigator.onLine === false) return new Unreachable("net.offline");
  try {
    await fetch(url, { ...OPTIONS, method: "GET", mode: "no-cors" });
  } catch {
    return new Unreachable("net.down");
  }
  return new CorsRefused(new URL(url).origin);
}

async function call(url, init, probe = url) {
  let response;
  try {
    response = await fetch(url, { ...OPTIONS, ...init });
  } catch {
    throw await whyUnreachable(probe);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.ok) return body;
  const message = body && body.error && typeof body.error.message === "string"
    ? body.error.message : `HTTP ${response.status}`;
  if (response.status >= 500 || response.status === 429 || response.status === 408) {
    throw new Unreachable("net.problem", { message });
  }
  throw new Refused(message, response.status, body && body.error);
}

/** GET the survey document (manifest, signed bytes, status). */
export function fetchSurvey(server, surveyId) {
  return call(surveyUrl(server, surveyId), { method: "GET" });
}

/** POST one stored submission body (to `path`: a two-server survey's "/two-server/uploads");
 * resolves to the server's answer ({accepted, duplicates} for LDP submissions). */
export function postSubmission(server, surveyId, body, path = "/submissions") {
  return call(surveyUrl(server, surveyId, path), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }, surveyUrl(server, surveyId));  // the probe GETs the survey, never re-POSTs the body
}
