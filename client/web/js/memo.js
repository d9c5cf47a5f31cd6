// What only a survey with a series needs (longitudinal surveys: the memo of
// client/hazmat_memo.py): the device's secret, the keyed tags the ledger charged, and the
// permanent value drawn from a keyed source. optional.js loads it (with sha256.js) for such a
// survey alone; a survey without a series, nearly every one, does not load it.
// docs/browser-randomizers.md, "Longitudinal surveys".

import { canonicalJson } from "./mechanisms.js";
import { bitLength } from "./rational.js";
import { checkBound } from "./randomness.js";
import { hmacSha256, toHex } from "./sha256.js";
import { done, knownTags, openStore, result } from "./store.js";

const PERMANENT_DOMAIN = "ldpsurvey/permanent-value/v1\0";
const TAG_DOMAIN = "ldpsurvey/ledger-tag/v1\0";
const SERIES_ANSWER_DOMAIN = "ldpsurvey/series-answer/v1\0";

/** The device's 32-byte memo secret, drawn with crypto.getRandomValues on first need. */
export async function deviceSecret() {
  const db = await openStore();
  const tx = db.transaction("device", "readwrite", { durability: "strict" });
  const finished = done(tx);
  const store = tx.objectStore("device");
  let secret = await result(store.get("secret"));
  if (!(secret instanceof Uint8Array) || secret.length !== 32) {
    secret = crypto.getRandomValues(new Uint8Array(32));
    store.put(secret, "secret");
  }
  await finished;
  return secret;
}

/** "<series> <question> <tag>" of every answer this browser was charged for in a series. */
export async function chargedTags() {
  const db = await openStore();
  const entries = await result(db.transaction("ledger").objectStore("ledger").getAll());
  return knownTags(entries);
}

// --- client/hazmat_memo.py HmacSource ---------------------------------------------------------

/**
 * HAZMAT. A deterministic source: HMAC-SHA256(key, message || 8-byte big-endian counter)
 * blocks, `randbelow(n)` taking bit_length(n - 1) bits (big-endian bytes, masked) and
 * rejecting >= n, as client/hazmat_memo.py's HmacSource. Used only to draw a memoized
 * permanent value; anyone with the key can recompute it for every answer. `hmacSha256` is
 * sha256.js's.
 */
export function hmacSource(key, message, hmacSha256) {
  let counter = 0n;
  let buffer = new Uint8Array(0);
  function take(count) {
    while (buffer.length < count) {
      const block = new Uint8Array(message.length + 8);
      block.set(message);
      new DataView(block.buffer).setBigUint64(message.length, counter);
      const digest = hmacSha256(key, block);
      const grown = new Uint8Array(buffer.length + digest.length);
      grown.set(buffer);
      grown.set(digest, buffer.length);
      buffer = grown;
      counter += 1n;
    }
    const out = buffer.slice(0, count);
    buffer = buffer.slice(count);
    return out;
  }
  return {
    randbelow(n) {
      checkBound(n);
      if (n === 1n) return 0n;
      const bits = bitLength(n - 1n);
      const mask = (1n << BigInt(bits)) - 1n;
      for (;;) {
        let value = 0n;
        for (const byte of take(Math.ceil(bits / 8))) value = (value << 8n) | BigInt(byte);
        value &= mask;
        if (value < n) return value;
      }
    },
  };
}

// --- a question's memo (mechanisms.js mechanismFor, with `m` its question, unit, encode,
// labels and permanent core) ---

/** The canonical answer as it enters the HMAC message (Python's JSON of the answer). */
function memoMessage(domain, m, answer, memo) {
  if (!memo || !(memo.secret instanceof Uint8Array) || memo.secret.length !== 32
      || typeof memo.series !== "string") {
    throw new TypeError("memo must be {secret: Uint8Array(32), series: string}");
  }
  const value = m.unit.memoValue(m.question, answer, m.encode, m.labels);
  const json = canonicalJson([memo.series, m.question.id, value, m.permanent.name,
                              m.permanent.params]);
  return new TextEncoder().encode(domain + json);
}

/**
 * What the memo keys on (hazmat_memo._series_answer): the answer itself, or, for a core that
 * rounds first (one_bit_mean's `seriesIndex`), the end it rounds to at the point drawn from the
 * question's own keyed stream: HMAC over (series, question id, mechanism name and parameters),
 * never the answer, so the same point every round.
 */
function seriesAnswer(m, index, answer, memo) {
  memoMessage(PERMANENT_DOMAIN, m, answer, memo);  // checks memo and the answer first
  if (typeof m.permanent.seriesIndex !== "function") return { index, answer };
  const json = canonicalJson([memo.series, m.question.id, m.permanent.name, m.permanent.params]);
  const source = hmacSource(memo.secret, new TextEncoder().encode(SERIES_ANSWER_DOMAIN + json),
                            hmacSha256);
  const end = m.permanent.seriesIndex(index, source);
  return { index: typeof index === "bigint" ? BigInt(end) : end,
           answer: m.permanent.indexAnswer(end) };
}

/** The memoized permanent report of `answer` (its `index`), drawn from the keyed source. */
export function permanentValue(m, index, answer, memo) {
  const kept = seriesAnswer(m, index, answer, memo);
  return m.permanent.perturbIndex(
    kept.index,
    hmacSource(memo.secret, memoMessage(PERMANENT_DOMAIN, m, kept.answer, memo), hmacSha256));
}

/** The ledger's keyed tag of a distinct answer in a series (hazmat_memo.answer_tag; one_bit_mean:
 * of the end, so at most two charges). */
export function answerTag(m, answer, memo) {
  const kept = seriesAnswer(m, m.encode(answer), answer, memo);
  return toHex(hmacSha256(memo.secret, memoMessage(TAG_DOMAIN, m, kept.answer, memo)))
    .slice(0, 32);
}
