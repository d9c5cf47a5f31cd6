// What this browser remembers, in IndexedDB (per page origin): pinned signing keys and the
// survey versions seen, the ledger of answered survey versions, the outbox of submissions
// (pending until the server acknowledges them, then kept as receipts) and the memoized
// permanent randomizations of longitudinal surveys. Clearing this site's data clears all of it.

const DB_NAME = "ldpsurvey";
const DB_VERSION = 1;
export const PENDING = "pending";
export const FAILED = "failed";
export const SENT = "sent";

/** Thrown when the ledger already holds this survey version. */
export class AlreadyAnswered extends Error {
  constructor(record) {
    super(`already answered (submission ${record.submission_id})`);
    this.name = "AlreadyAnswered";
    this.record = record;
  }
}

let opening = null;

export function openStore() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      const request = indexedDB.open(DB_NAME, DB_VERSION);
      request.onupgradeneeded = () => {
        const db = request.result;
        db.createObjectStore("trust");   // "<origin> <survey id>" -> {pin, seen}
        db.createObjectStore("ledger");  // "<survey id>@<version>" -> entry
        db.createObjectStore("outbox", { keyPath: "submission_id" });
        db.createObjectStore("memo");    // "<series> <question id>" -> memo object
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("the page's storage is blocked by another tab"));
    });
  }
  return opening;
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error("storage transaction aborted"));
  });
}

function result(request) {
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
export const memoKey = (series, questionId) => `${series} ${questionId}`;

export const getTrust = (key) => get("trust", key);
export const putTrust = (key, value) => put("trust", value, key);
export const answered = (surveyId, version) => get("ledger", ledgerKey(surveyId, version));
export const getMemo = (series, questionId) => get("memo", memoKey(series, questionId));
export const getRecord = (submissionId) => get("outbox", submissionId);

/**
 * Charge the ledger, store the submission in the outbox and persist the memos, in one durable
 * transaction, before the first attempt to send (client/respondent.py submit). Throws
 * AlreadyAnswered if this survey version was answered meanwhile (another tab).
 */
export async function recordSubmission({ ledger, record, memos }) {
  const db = await openStore();
  const tx = db.transaction(["ledger", "outbox", "memo"], "readwrite", { durability: "strict" });
  const finished = done(tx);
  const key = ledgerKey(ledger.survey, ledger.version);
  const previous = await result(tx.objectStore("ledger").get(key));
  if (previous !== undefined) {
    tx.abort();
    await finished.catch(() => {});
    throw new AlreadyAnswered(previous);
  }
  tx.objectStore("ledger").add(ledger, key);
  tx.objectStore("outbox").add(record);
  for (const [memoId, memo] of memos) tx.objectStore("memo").put(memo, memoId);
  await finished;
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
