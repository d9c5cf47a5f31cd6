// Delivering stored submissions, the twin of client/outbox.py: a resend sends the stored body,
// never new noise. docs/web.md, "The ledger and the outbox (IndexedDB)".

import { Refused, Unreachable, postSubmission } from "./api.js";
import { FAILED, INVITE, PENDING, SENT, records, updateRecord } from "./store.js";

/** Send one stored record; resolves to the updated record. */
export async function deliver(record) {
  const attempts = (record.attempts || 0) + 1;
  const sent = (duplicate) => updateRecord(record.submission_id, {
    status: SENT, attempts, delivered: new Date().toISOString(), duplicate, last_error: null,
    last_words: null, invite: null,
  });
  try {
    const reply = await postSubmission(record.server, record.survey_id, record.invite
      ? { ...record.body, invite: record.invite } : record.body, record.path);
    return sent(Boolean(reply && reply.duplicates && reply.duplicates.length));
  } catch (err) {
    if (err instanceof Refused) {
      const { code, details } = err.error || {};
      const refused = code === "invite_refused" && (details?.items?.[0]?.reason || "?");
      if (refused === "other_code") return sent(true);
      return updateRecord(record.submission_id, refused
        ? { status: INVITE, attempts, last_error: err.message, last_words: null, refused }
        : { status: FAILED, attempts, last_error: err.message, last_words: null, invite: null });
    }
    if (err instanceof Unreachable) {  // its words, to say it in the page's language
      return updateRecord(record.submission_id, { status: PENDING, attempts,
        last_error: err.message, last_words: { key: err.key, params: err.params } });
    }
    throw err;
  }
}

let flushing = null;

/** Send every pending submission for this server (one flush at a time). */
export function flush(server) {
  if (!flushing) {
    flushing = (async () => {
      const out = [];
      for (const record of await records(server, [PENDING])) out.push(await deliver(record));
      return out;
    })().finally(() => { flushing = null; });
  }
  return flushing;
}
