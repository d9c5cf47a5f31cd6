// What this browser remembers in IndexedDB: pinned keys and versions seen, the ledger, the
// outbox, the memo secret. docs/web.md, "The ledger and the outbox (IndexedDB)".

import { Worded } from "./i18n.js";

const DB_NAME = "ldpsurvey";
const DB_VERSION = 1;
export const PENDING = "pending";
export const FAILED = "failed";
export const SENT = "sent";
export const INVITE = "invite";

/** Thrown when the ledger already holds this survey version. */
export class AlreadyAnswered extends Error {
  constructor(record) {
    super(`already answered (submission ${record.submission_id})`);
    this.name = "AlreadyAnswered";
    this.record = record;
  }
}

/** The browser does not let the page keep its ledger and outbox (IndexedDB). */
export class StorageUnavailable extends Worded {
  constructor(cause) {
    super("store.unavailable", { cause: cause && cause.message });
    this.name = "StorageUnavailable";
  }
}

let opening = null;

export function openStore() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      let request;
      try {
        request = indexedDB.open(DB_NAME, DB_VERSION);
      } catch (err) {
        reject(new StorageUnavailable(err));
        return;
      }
      request.onupgradeneeded = () => {
        const db = request.result;
        db.createObjectStore("trust");   // "<origin> <survey id>" -> {pin, seen}
        db.createObjectStore("ledger");  // "<survey id>@<version>" -> entry
        db.createObjectStore("outbox", { keyPath: "submission_id" });
        db.createObjectStore("device");  // "secret" -> Uint8Array(32)
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(new StorageUnavailable(request.error));
      request.onblocked = () => reject(new Error("the page's storage is blocked by another tab"));
    });
  }
  return opening;
}

export function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error("storage transaction aborted"));
  });
}

export function result(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function get(storeName, key) {
  const db = await openStore();
  return result(db.transaction(storeName).objectStore(storeName).get(key));
}

async function put(storeName, value, key) {
  const db = await openStore();
  const tx = db.transaction(storeName, "readwrite", { durability: "strict" });
  tx.objectStore(storeName).put(value, key);
  return done(tx);
}

export const trustKey = (origin, surveyId) => `${origin} ${surveyId}`;
export const ledgerKey = (surveyId, version) => `${surveyId}@${version}`;

export const getTrust = (key) => get("trust", key);
export const putTrust = (key, value) => put("trust", value, key);
export const answered = (surveyId, version) => get("ledger", ledgerKey(surveyId, version));

export const getRecord = (submissionId) => get("outbox", submissionId);

/**
 * Charge the ledger and store the submission in the outbox, in one durable transaction,
 * before the first attempt to send (client/respondent.py submit). `charges` are
 * {question, epsilon, series, tag}: in a series, an answer whose keyed tag was charged before
 * costs nothing more (client/ledger.py). Throws AlreadyAnswered if this survey version was
 * answered meanwhile (another tab). Returns the ledger entry.
 */
export async function recordSubmission({ survey, version, record, charges, sha256 }) {
  const db = await openStore();
  const tx = db.transaction(["ledger", "outbox"], "readwrite", { durability: "strict" });
  const finished = done(tx);
  const ledger = tx.objectStore("ledger");
  const key = ledgerKey(survey, version);
  const previous = await result(ledger.get(key));
  if (previous !== undefined) {
    tx.abort();
    await finished.catch(() => {});
    throw new AlreadyAnswered(previous);
  }
  const known = knownTags(await result(ledger.getAll()));
  const entries = charges.map((c) => {
    const id = `${c.series} ${c.question} ${c.tag}`;
    const reused = Boolean(c.tag) && known.has(id);
    if (c.tag) known.add(id);
    return { ...c, epsilon: reused ? 0 : c.epsilon, reused };
  });
  const entry = { survey, version, sha256, submission_id: record.submission_id,
                  time: record.created, entries };
  ledger.add(entry, key);
  tx.objectStore("outbox").add(record);
  await finished;
  return entry;
}

/** The ε of every report this browser's ledger charged (for the composition totals). */
export async function chargedEpsilons() {
  const db = await openStore();
  const entries = await result(db.transaction("ledger").objectStore("ledger").getAll());
  return entries.flatMap((e) => e.entries.map((c) => c.epsilon)).filter((x) => x > 0);
}

/** "<series> <question> <tag>" of every charge in `ledgerEntries` with a tag. */
export function knownTags(ledgerEntries) {
  const known = new Set();
  for (const entry of ledgerEntries) {
    for (const c of entry.entries) if (c.tag) known.add(`${c.series} ${c.question} ${c.tag}`);
  }
  return known;
}

/** Update a stored outbox record (its body never changes). */
export async function updateRecord(submissionId, changes) {
  const db = await openStore();
  const tx = db.transaction("outbox", "readwrite", { durability: "strict" });
  const store = tx.objectStore("outbox");
  const record = await result(store.get(submissionId));
  if (record) store.put({ ...record, ...changes, body: record.body });
  await done(tx);
  return record ? { ...record, ...changes, body: record.body } : undefined;
}

/** Outbox records for a server with one of the given statuses, oldest first. */
export async function records(server, statuses = [PENDING]) {
  const db = await openStore();
  const all = await result(db.transaction("outbox").objectStore("outbox").getAll());
  return all.filter((r) => r.server === server && statuses.includes(r.status))
    .sort((a, b) => a.created.localeCompare(b.created));
}
