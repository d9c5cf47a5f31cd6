// Checking a served survey before anything is answered, the twin of shared/manifest.py
// verify_manifest: only the signed bytes are verified and parsed; every refusal throws a
// Refusal. docs/web.md, "What the page does" (2).

import { canonicalSurveyText } from "./canonical.js";
import { Worded, quoted } from "./i18n.js";
import { ManifestMismatch, UnsupportedMechanism, mechanismFor } from "./mechanisms.js";
import { loadFor, loaded } from "./optional.js";
import { SkipMismatch, skipPlan } from "./skip_logic.js";
import { isTypeName, unitOf } from "./types/index.js";

export const DEFAULT_MAX_EPSILON = 5.0; // client/trust.py DEFAULT_MAX_EPSILON


/** A reason not to answer, in the respondent's words: a message of the catalogue. */
export class Refusal extends Worded {
  constructor(key, params = {}) {
    super(key, params);
    this.name = "Refusal";
  }
}

/** Bytes from strict base64 (no whitespace, correct padding); null when it is not base64. */
export function fromBase64(text) {
  if (typeof text !== "string" || text.length % 4 !== 0 ||
      !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    return null;
  }
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function hex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Hex(bytes) {
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

async function verifySignature(publicKey, signature, bytes) {
  let key;
  try {
    key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
  } catch (err) {
    if (err && err.name === "NotSupportedError") {
      throw new Refusal("refusal.noEd25519");
    }
    throw new Refusal("refusal.badKey");
  }
  return crypto.subtle.verify({ name: "Ed25519" }, key, signature, bytes);
}

function refuseUnsafeNumbers(value) {
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new Refusal("refusal.bigNumber");
  }
  if (Array.isArray(value)) value.forEach(refuseUnsafeNumbers);
  else if (value && typeof value === "object") Object.values(value).forEach(refuseUnsafeNumbers);
}

// shared/survey.py's limits on what a survey may hold.
const SLUG = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/;
const QUESTION_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;
const MAX_QUESTIONS = 500;
const MAX_TOTAL_OPTIONS = 2 ** 20; // options in all questions together
const MAX_TEXT = 2000;
const codePoints = (s) => [...s].length; // Python's len()
/** Text of at most `max` code points that is not blank. */
export const isText = (s, max = MAX_TEXT) => typeof s === "string" && s.trim() !== "" &&
  codePoints(s) <= max;

/** The survey's shape before any type's module is loaded: its fields and each question's
 * common ones (id, text, a known type, ε, optional). */
function checkShape(survey) {
  const ok = survey && typeof survey === "object" && !Array.isArray(survey) &&
    typeof survey.id === "string" && SLUG.test(survey.id) &&
    Number.isSafeInteger(survey.version) && survey.version >= 1 && isText(survey.title) &&
    (survey.description === undefined || (typeof survey.description === "string" &&
                                          codePoints(survey.description) <= MAX_TEXT)) &&
    (survey.series === undefined || (typeof survey.series === "string" &&
                                     SLUG.test(survey.series))) &&
    Array.isArray(survey.questions) && survey.questions.length > 0 &&
    survey.questions.length <= MAX_QUESTIONS &&
    survey.questions.reduce((n, q) => n + (Array.isArray(q?.options) ? q.options.length : 0), 0)
      <= MAX_TOTAL_OPTIONS;
  if (!ok) throw new Refusal("refusal.notSurvey");
  const ids = new Set();
  for (const q of survey.questions) {
    if (!q || typeof q !== "object" || typeof q.id !== "string" || ids.has(q.id) ||
        !QUESTION_ID.test(q.id) || !isText(q.text) || !isTypeName(q.type) ||
        (q.disclosed !== true && (typeof q.epsilon !== "number" || !(q.epsilon > 0) ||
                                  !Number.isFinite(q.epsilon))) ||
        typeof q.optional !== "boolean") {
      throw new Refusal("refusal.badQuestion");
    }
    ids.add(q.id);
  }
}

/** Each question's own fields, as its type's unit checks them (once its module is loaded). */
function checkQuestions(survey) {
  for (const [index, q] of survey.questions.entries()) {
    const refusal = unitOf(q).shapeRefusal(q);
    if (refusal) throw new Refusal(refusal, { question: quoted(q.text) });
    if (q.instantaneous_epsilon != null && survey.series === undefined) {
      throw new Refusal("refusal.instantaneous", { question: quoted(q.text) });
    }
    if (q.special !== undefined && !loaded("special").specialFits(q, unitOf(q))) {
      throw new Refusal("refusal.special", { question: quoted(q.text) });
    }
    if (q.filter !== undefined && (!unitOf(q).takesFilter || loaded("optionFilter")
      .filterMismatch(q, survey.questions.slice(0, index)))) {  // option_filter.js
      throw new Refusal("refusal.badQuestion");
    }
  }
}

/**
 * Verify a GET /api/surveys/<id> document: the signature over `signed_bytes`, the survey it
 * holds, and each question's mechanism and parameters (re-derived by mechanisms.js).
 * Returns {survey, sha256, fingerprint, publicKey, mechanisms, status, twoServer, skip};
 * twoServer is null in the LDP mode, else the signed servers and keys (twoserver/verify.js);
 * skip is each question's skip logic (skip_logic.js skipPlan).
 */
export async function verifyDocument(doc, surveyId) {
  if (!doc || typeof doc !== "object") {
    throw new Refusal("refusal.noManifest");
  }
  if (!doc.signature) {
    throw new Refusal("refusal.unsigned");
  }
  const signature = fromBase64(doc.signature);
  const publicKey = fromBase64(doc.public_key);
  if (!signature || signature.length !== 64 || !publicKey || publicKey.length !== 32) {
    throw new Refusal("refusal.badEncoding");
  }
  const bytes = fromBase64(doc.signed_bytes);
  if (!bytes) {
    throw new Refusal("refusal.noSignedBytes");
  }
  if (!(await verifySignature(publicKey, signature, bytes))) {
    throw new Refusal("refusal.badSignature");
  }
  performance.mark("ldpsurvey-signature");  // the phases bench/bench_first_question.py prints
  let survey;
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    survey = JSON.parse(text);
  } catch {
    throw new Refusal("refusal.notJson");
  }
  refuseUnsafeNumbers(survey);
  checkShape(survey);
  try {
    await loadFor(survey);  // its types' units, the location and two-server modules, ...
  } catch {
    throw new Refusal("refusal.noCode");
  }
  checkQuestions(survey);
  performance.mark("ldpsurvey-modules");
  let twoServer = null;
  if (survey.collection !== undefined || survey.two_server !== undefined) {
    const { TwoServerMismatch, checkTwoServer } = loaded("twoServerVerify");
    try {
      twoServer = checkTwoServer(survey);  // docs/two-server.md; twoserver/verify.js
    } catch (err) {
      if (!(err instanceof TwoServerMismatch)) throw err;
      throw new Refusal("refusal.twoServer", { detail: err.message });
    }
  }
  let canonical = null;
  try {
    canonical = canonicalSurveyText(survey);
  } catch {
    // not a survey Python could have written: refused just below
  }
  if (canonical !== text) {
    throw new Refusal("refusal.notCanonical");
  }
  if (survey.id !== surveyId) {
    throw new Refusal("refusal.otherSurvey", { sent: quoted(survey.id), wanted: quoted(surveyId) });
  }
  const sha256 = await sha256Hex(bytes);
  if (doc.sha256 !== undefined && doc.sha256 !== sha256) {
    throw new Refusal("refusal.badHash");
  }
  let skip;
  try {
    skip = skipPlan(survey);  // skip logic: conditions parsed, "not asked" values known
  } catch (err) {
    if (!(err instanceof SkipMismatch)) throw err;
    throw new Refusal("refusal.skipLogic", { detail: err.message });
  }
  performance.mark("ldpsurvey-canonical");  // canonical bytes, hash and skip logic checked
  const mechanisms = new Map();
  for (const q of survey.questions) {
    // two-server without ε0: nothing to draw (twoserver/verify.js, loaded for such surveys)
    if (twoServer && !loaded("twoServerVerify").hasLocalMechanism(survey, q)) continue;
    try {
      mechanisms.set(q.id, mechanismFor(q, { notAsked: skip.get(q.id).notAsked }));
    } catch (err) {
      if (err instanceof UnsupportedMechanism) {
        throw new Refusal("refusal.unsupported", { question: quoted(q.text), detail: err.message });
      }
      if (err instanceof ManifestMismatch) {
        throw new Refusal("refusal.mismatch", { question: quoted(q.text), detail: err.message });
      }
      throw err;
    }
  }
  return { survey, sha256, fingerprint: await sha256Hex(publicKey), publicKey: doc.public_key,
           mechanisms, status: doc.status, twoServer, skip };
}
