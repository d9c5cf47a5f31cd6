// The two calls the page makes to the aggregator: read a survey, send a submission.
// No cookies, no referrer; the page's CSP allows connections to this one server only.

const OPTIONS = { credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" };

/** The network failed or the server had a transient error: try again later. */
export class Unreachable extends Error {
  constructor(message) {
    super(message);
    this.name = "Unreachable";
  }
}

/** The server answered 4xx: it refused, and resending the same bytes will not help. */
export class Refused extends Error {
  constructor(message, status) {
    super(message);
    this.name = "Refused";
    this.status = status;
  }
}

export function surveyUrl(server, surveyId, tail = "") {
  return `${server}/api/surveys/${encodeURIComponent(surveyId)}${tail}`;
}

async function call(url, init) {
  let response;
  try {
    response = await fetch(url, { ...OPTIONS, ...init });
  } catch {
    throw new Unreachable("the survey server cannot be reached (offline?)");
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
    throw new Unreachable(`the server had a problem (${message})`);
  }
  throw new Refused(message, response.status);
}

/** GET the survey document (manifest, signed bytes, status). */
export function fetchSurvey(server, surveyId) {
  return call(surveyUrl(server, surveyId), { method: "GET" });
}

/** POST one stored submission body; resolves to the server's {accepted, duplicates}. */
export function postSubmission(server, surveyId, body) {
  return call(surveyUrl(server, surveyId, "/submissions"), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}
