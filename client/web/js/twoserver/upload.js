// A two-server upload built on the device, exactly as the Python client builds it
// (client/two_server.py build_upload, shared/two_server/encoding.py and upload.py):
//
// 1. per answered question, in survey order: the answer's index (binary -> 0/1, categorical /
//    ordinal -> option index, integer -> answer - min), or with a local ε0 the report of the
//    question's mechanism (mechanisms.js, drawn from `source`) as a measurement;
// 2. a 16-byte report id (the Prio3 nonce of every key and the submission id as a UUID);
// 3. per key (questions, then declared crosstabs with cell i*k2 + j): Prio3Count /
//    Prio3Histogram(k, bestChunkLength(k)) / Prio3Sum(max - min) / for a multiselect question
//    Prio3MultihotCountVec(k, max weight, bestChunkLength(k + bits of the weight)) of its bits
//    (twoserver/multiselect.js setEncoding: a local psfo_grr report is a Histogram; skip logic
//    adds a "not asked" entry) / for a skip-logic integer with ε0, Prio3Count + Prio3Sum of its
//    report pair (askedPair) / for a number on a grid (twoserver/fixed_point.js) Prio3Sum of
//    its grid index, Prio3Histogram of its bin, or both as Prio3Histogram + Prio3SumVec
//    (histogramSum), sharded with `rand` drawn from `source`,
//    ctx = "ldpsurvey two-server v1|<survey id>|<version>|<key>";
// 4. the leader's input shares and the helper's, each as canonical JSON {key: base64url}, sealed
//    (hpke.js) to that server's key from the signed manifest with info
//    "ldpsurvey two-server input share v1|<id>|<version>|<report id hex>|<role>".
//
// Every draw comes from `source` (randomness.js): `secureSource` (crypto.getRandomValues) by
// default; n random bytes are ONE draw randbelow(2^(8n)), big-endian, so a tape recorded by the
// Python client replays here. Ephemeral HPKE keys come from WebCrypto unless a test passes
// `ephemeralKeys: { leader, helper }` (32-byte private keys).

import { b64url, concat, fromB64url } from "../bytes.js";
import { seal } from "../hpke.js";
import { AnswerError, canonicalJson, mechanismFor } from "../mechanisms.js";
import { secureSource } from "../randomness.js";
import { prio3Count, prio3Histogram, prio3MultihotCountVec, prio3Sum } from "../prio3/vdaf.js";
import { crosstabKey, crosstabsSent, questionOf } from "./crosstabs.js";
import { loaded } from "../optional.js";  // twoserver/fixed_point.js: a number on a grid
import { notAskedIds } from "../skip_logic.js";
import { unitOf } from "../types/index.js";  // how each question type is measured (js/types/)

const te = new TextEncoder();
export const CTX_LABEL = "ldpsurvey two-server v1";
export const INFO_LABEL = "ldpsurvey two-server input share v1";
export const UPLOAD_PATH = "two-server/uploads";

/** n uniform bytes as ONE draw below 2^(8n), big-endian (os.urandom's place in the tape). */
export function randomBytes(source, n) {
  let value = source.randbelow(1n << BigInt(8 * n));
  const out = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(value & 255n);
    value >>= 8n;
  }
  return out;
}

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

function uuidOf(bytes) {
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The ParallelSum chunk length with the shortest proof for `measLen` range checks, ties to the
 * smaller (shared/prio3 best_chunk_length): proof length 2·chunk + 2·(p − 1) + 1 with p the
 * next power of two >= 1 + ceil(measLen / chunk).
 */
export function bestChunkLength(measLen) {
  let best = 1;
  let bestLen = Infinity;
  for (let chunk = 1; chunk <= measLen; chunk++) {
    const calls = Math.ceil(measLen / chunk);
    let p = 1;
    while (p < 1 + calls) p *= 2;
    const len = 2 * chunk + 2 * (p - 1) + 1;
    if (len < bestLen) {
      best = chunk;
      bestLen = len;
    }
  }
  return best;
}

/** A question's values; one more with a "not asked" value (skip logic: its last cell). */
const domainSize = (q, notAsked = false) => unitOf(q).valueCount(q) + (notAsked ? 1 : 0);

/** How one key is encoded: { key, kind: "count" | "histogram" | "sum" | "multihot" |
 *  "asked_pair" | "histogram_sum", length, max, offset } (the question type's unit says how,
 *  js/types/). */
export function questionEncoding(q, notAsked = false) {
  return { key: q.id, offset: 0, ...unitOf(q).encoding(q, notAsked) };
}

export { crosstabKey, crosstabsSent, questionOf };  // crosstabs.js, re-exported for callers

/** Every key of a two-server survey in upload order: questions, then crosstabs. */
export function encodings(survey) {
  const byId = new Map(survey.questions.map((q) => [q.id, q]));
  const na = notAskedIds(survey);
  const out = new Map(survey.questions.map((q) => [q.id, questionEncoding(q, na.has(q.id))]));
  for (const spec of survey.crosstabs || []) {
    const length = domainSize(byId.get(spec.rows), na.has(spec.rows)) *
      domainSize(byId.get(spec.cols), na.has(spec.cols));
    out.set(crosstabKey(spec), { key: crosstabKey(spec), kind: "histogram", length, max: 1, offset: 0 });
  }
  return out;
}

const instances = new Map();

/**
 * Two Prio3 reports under one key (shared/two_server/pair_vdaf.py): Prio3Count of the asked bit
 * then Prio3Sum(max) of the clipped number, with the same nonce and context; `rand`, the public
 * share and each input share are the Count's bytes followed by the Sum's.
 */
function askedPair(max) {
  const bit = prio3Count();
  const number = prio3Sum(max);
  return {
    RAND_SIZE: bit.RAND_SIZE + number.RAND_SIZE,
    shard(ctx, [b, y], nonce, rand) {
      const [pubB, sharesB] = bit.shard(ctx, b, nonce, rand.slice(0, bit.RAND_SIZE));
      const [pubY, sharesY] = number.shard(ctx, y, nonce, rand.slice(bit.RAND_SIZE));
      return [concat(pubB, pubY), sharesB.map((share, i) => concat(share, sharesY[i]))];
    },
  };
}

/** The Prio3 instance of an encoding (built once: circuits are not free). */
export function instanceOf(encoding) {
  const id = `${encoding.kind}:${encoding.length}:${encoding.max}`;
  if (!instances.has(id)) {
    const vdaf = encoding.kind === "asked_pair" ? askedPair(encoding.max)
      : encoding.kind === "histogram_sum"
        ? loaded("twoServerGrid").histogramSum(encoding.length - 1, encoding.max)
      : encoding.kind === "count" ? prio3Count()
      : encoding.kind === "sum" ? prio3Sum(encoding.max)
        : encoding.kind === "multihot"
          ? prio3MultihotCountVec(encoding.length, encoding.max,
            bestChunkLength(encoding.length + encoding.max.toString(2).length))
          : prio3Histogram(encoding.length, bestChunkLength(encoding.length));
    instances.set(id, vdaf);
  }
  return instances.get(id);
}

/** The measured index (or offset value) of a true answer; AnswerError if it does not fit. */
export const questionIndex = (q, value, notAsked = false) =>
  unitOf(q).measuredIndex(q, value, notAsked);

/** The measurement of a local mechanism's report (encoding.report_measurement). */
function reportMeasurement(q, report, notAsked = false) {
  return unitOf(q).reportMeasurement(q, report, notAsked, questionEncoding(q, notAsked));
}

export const ctxOf = (survey, key) => te.encode(`${CTX_LABEL}|${survey.id}|${survey.version}|${key}`);

export const infoOf = (survey, reportId, role) =>
  te.encode(`${INFO_LABEL}|${survey.id}|${survey.version}|${hex(reportId)}|${role}`);

/** Per answered question its measured index (local report when ε0 is set), and the charges. */
export function measure(survey, answers, source = secureSource) {
  const indices = new Map();
  const charges = [];
  const na = notAskedIds(survey);  // skip logic: `answers` hold NOT_ASKED where due
  for (const q of survey.questions) {
    const value = answers[q.id];
    if (value === undefined || value === null) {
      if (q.optional) continue;
      throw new AnswerError(`question ${JSON.stringify(q.id)} is required`);
    }
    let local = null;
    if (q.local_epsilon != null) {
      const mech = mechanismFor(q, { notAsked: na.has(q.id) });
      mech.encode(value);  // refuse before randomizing anything
      indices.set(q.id, reportMeasurement(q, mech.perturb(value, source), na.has(q.id)));
      local = q.local_epsilon;
    } else {
      indices.set(q.id, questionIndex(q, value, na.has(q.id)));
    }
    charges.push({ question: q.id, central_epsilon: q.central_epsilon, local_epsilon: local });
  }
  return { indices, charges };
}

/** Per key the Prio3 measurement (questions, then crosstabs both of whose questions were answered). */
export function measurements(survey, indices) {
  const byId = new Map(survey.questions.map((q) => [q.id, q]));
  const na = notAskedIds(survey);
  const out = new Map();
  for (const q of survey.questions) if (indices.has(q.id)) out.set(q.id, indices.get(q.id));
  for (const spec of survey.crosstabs || []) {
    if (indices.has(spec.rows) && indices.has(spec.cols)) {
      out.set(crosstabKey(spec), indices.get(spec.rows) *
        domainSize(byId.get(spec.cols), na.has(spec.cols)) + indices.get(spec.cols));
    }
  }
  return out;
}

/**
 * The sealed upload for `answers` ({question id: answer}) of a verified two-server survey:
 * { submissionId, body, charges }; `body` is the JSON the leader receives. It holds no answer.
 */
export async function buildUpload(survey, answers, { source = secureSource, ephemeralKeys } = {}) {
  const servers = survey.two_server;
  const { indices, charges } = measure(survey, answers, source);
  const reportId = randomBytes(source, 16);
  const encs = encodings(survey);
  const publicShares = {};
  const halves = [{}, {}];
  for (const [key, measurement] of measurements(survey, indices)) {
    const vdaf = instanceOf(encs.get(key));
    const [pub, shares] = vdaf.shard(ctxOf(survey, key), measurement, reportId,
      randomBytes(source, vdaf.RAND_SIZE));
    publicShares[key] = b64url(pub);
    halves[0][key] = b64url(shares[0]);
    halves[1][key] = b64url(shares[1]);
  }
  const sealed = {};
  for (const [i, role] of [[0, "leader"], [1, "helper"]]) {
    const pk = fromB64url(servers[`${role}_hpke_key`]);
    const options = ephemeralKeys ? { ephemeralPrivateKey: ephemeralKeys[role] } : {};
    sealed[role] = b64url(await seal(pk, infoOf(survey, reportId, role),
      te.encode(canonicalJson(halves[i])), options));
  }
  const submissionId = uuidOf(reportId);
  return {
    submissionId,
    body: { submission_id: submissionId, version: survey.version, public_shares: publicShares,
      leader_share: sealed.leader, helper_share: sealed.helper },
    charges,
  };
}
