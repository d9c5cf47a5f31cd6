// Whether this browser answers a verified survey (the pinned key, versions seen, the ε limit):
// the twin of client/trust.py. docs/web.md, "What the page does" (2).

import { Refusal } from "./manifest.js";
import { PolicyError, checkPolicy } from "./mechanisms.js";
import { loaded } from "./optional.js";  // twoserver/crosstabs.js: a two-server survey's
import { getTrust, putTrust, trustKey } from "./store.js";

/** Apply the device's checks to a verified survey, then remember its key and version. */
export async function checkTrust(verified, { origin, surveyId, fingerprint, maxEpsilon }) {
  const { survey, sha256 } = verified;
  const key = trustKey(origin, surveyId);
  const data = (await getTrust(key)) || { pin: null, seen: {} };
  if (fingerprint) {
    if (verified.fingerprint !== fingerprint.toLowerCase()) {
      throw new Refusal("refusal.otherKey", { signed: verified.fingerprint.slice(0, 16),
                                              trusted: fingerprint.slice(0, 16) });
    }
  } else if (data.pin && data.pin.fingerprint !== verified.fingerprint) {
    throw new Refusal("refusal.keyChanged", { pinned: data.pin.fingerprint.slice(0, 16),
                                              now: verified.fingerprint.slice(0, 16) });
  }
  const previous = data.seen[String(survey.version)];
  if (previous !== undefined && previous !== sha256) {
    throw new Refusal("refusal.versionChanged", { version: survey.version });
  }
  const highest = Math.max(0, ...Object.keys(data.seen).map(Number));
  if (survey.version < highest) {
    throw new Refusal("refusal.older", { version: survey.version, highest });
  }
  try {
    for (const view of policyViews(survey)) checkPolicy(view, maxEpsilon);
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    throw new Refusal("refusal.policy", { reason: err });
  }
  const firstUse = !fingerprint && !data.pin;
  if (!data.pin || data.pin.fingerprint !== verified.fingerprint) {
    data.pin = { fingerprint: verified.fingerprint, public_key: verified.publicKey,
                 pinned_at: new Date().toISOString(), how: fingerprint ? "page" : "first use" };
  }
  data.seen[String(survey.version)] = sha256;
  await putTrust(key, data);
  return { firstUse };
}

/** The survey as the ε limit sees it, one view per threat (client/budget.py cost_views): the
 * LDP mode as it is; the two-server mode against one party (the central ε of every question
 * and of every declared crosstab, a noisy release of its own) and, if the servers collude, the
 * local ε0 of each question randomized on the device. Each view must fit the limit, so a large
 * central ε cannot hide behind a small ε0, nor the other way round. */
export function policyViews(survey) {
  if (survey.collection !== "two-server") return [survey];
  const { crosstabKey, crosstabsSent } = loaded("twoServerCrosstabs");  // optional.js needed
  const all = new Set(survey.questions.map((q) => q.id));
  const central = [...survey.questions.map((q) => ({ id: q.id, epsilon: q.central_epsilon })),
    ...crosstabsSent(survey, all).map(([spec, epsilon]) => ({ id: crosstabKey(spec), epsilon }))];
  const local = survey.questions.filter((q) => q.local_epsilon != null)
    .map((q) => ({ id: q.id, epsilon: q.local_epsilon }));
  return [{ questions: central }, ...(local.length ? [{ questions: local }] : [])];
}
