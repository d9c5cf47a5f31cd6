// The two-server part of a signed survey, checked in the page as client/trust.py and
// shared/two_server/config.py check it: the helper's URL and HPKE key (and the leader's) come
// only from the signed bytes; a malformed table, a key that is not 32 bytes of base64url, the
// leader's key given as the helper's, a question without its central ε, or a local mechanism
// that cannot run before encoding is refused before anything is asked or drawn.

import { fromB64url } from "../bytes.js";
import { unitOf } from "../types/index.js";  // the local mechanisms each type may run

export const TWO_SERVER = "two-server";
const KEYS = new Set(["leader_url", "leader_hpke_key", "helper_url", "helper_hpke_key",
  "min_batch_size", "delta"]);

export class TwoServerMismatch extends Error {}

export const isTwoServer = (survey) => Boolean(survey) && survey.collection === TWO_SERVER;

function url(value, what) {
  let parsed = null;
  try {
    parsed = typeof value === "string" ? new URL(value) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || !["http:", "https:"].includes(parsed.protocol) || !parsed.host ||
      parsed.search || parsed.hash || value.endsWith("/")) {
    throw new TwoServerMismatch(`the ${what}'s address is not an http(s) URL`);
  }
  return value;
}

function key(value, what) {
  const raw = fromB64url(value);
  if (!raw || raw.length !== 32) {
    throw new TwoServerMismatch(`the ${what}'s encryption key is not a 32-byte X25519 key`);
  }
  return raw;
}

/** {leaderUrl | null, helperUrl, leaderKey, helperKey} of a two-server survey, or throws. */
export function checkTwoServer(survey) {
  if (survey.collection !== TWO_SERVER) throw new TwoServerMismatch("unknown collection mode");
  const t = survey.two_server;
  if (!t || typeof t !== "object" || Array.isArray(t) || Object.keys(t).some((k) => !KEYS.has(k))) {
    throw new TwoServerMismatch("its two_server table is missing or has unknown keys");
  }
  const helperUrl = url(t.helper_url, "helper");
  const leaderUrl = t.leader_url == null ? null : url(t.leader_url, "leader");
  const helperKey = key(t.helper_hpke_key, "helper");
  const leaderKey = key(t.leader_hpke_key, "leader");
  if (helperKey.every((b, i) => b === leaderKey[i])) {
    throw new TwoServerMismatch("the helper's key is the leader's: one party could open both halves");
  }
  if (!Number.isSafeInteger(t.min_batch_size) || t.min_batch_size < 2) {
    throw new TwoServerMismatch("its minimum batch size is not an integer of at least 2");
  }
  if (!(typeof t.delta === "number" && t.delta > 0 && t.delta < 1)) {
    throw new TwoServerMismatch("its δ is not a number in (0, 1)");
  }
  for (const q of survey.questions) {
    if (!(typeof q.central_epsilon === "number" && q.central_epsilon > 0 &&
          Number.isFinite(q.central_epsilon))) {
      throw new TwoServerMismatch(`question “${q.text}” has no central ε`);
    }
    const refusal = unitOf(q).twoServerRefusal(q);
    if (refusal) throw new TwoServerMismatch(`question “${q.text}”: ${refusal}`);
    if (q.local_epsilon == null) {
      if (q.mechanism !== "none" || q.epsilon !== q.central_epsilon) {
        throw new TwoServerMismatch(`question “${q.text}” names a local mechanism without a local ε0`);
      }
    } else if (!unitOf(q).localMechanisms(q).includes(q.mechanism) ||
               q.epsilon !== q.local_epsilon) {
      throw new TwoServerMismatch(`question “${q.text}”: ${q.mechanism} cannot run before a ` +
                                  "two-server upload at its local ε0");
    }
  }
  return { leaderUrl, helperUrl, leaderKey, helperKey };
}

/** Whether a question runs a local mechanism on the device (two-server: only with ε0). */
export const hasLocalMechanism = (survey, q) => !isTwoServer(survey) || q.local_epsilon != null;
