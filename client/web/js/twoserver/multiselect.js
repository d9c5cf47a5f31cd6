// How a check-all-that-apply question is measured in the two-server mode
// (shared/two_server/multiselect.py), loaded only for a two-server survey with one
// (optional.js); twoserver/upload.js takes it from `loaded("twoServerSets")`.

import { bitsFromWords } from "../mechanisms.js";
import { setEncoder, shapeOf } from "../multiselect.js";
import { NOT_ASKED } from "../skip_logic.js";

/** How a two-server multiselect question is measured: {kind, length, max}. `notAsked`: the
 * question depends on randomized answers, so its measurement ends with a "not asked" entry (k
 * + 1 entries; set_encoding in shared/two_server/multiselect.py). */
export function setEncoding(question, notAsked = false) {
  const { k, m, least } = shapeOf(question);
  const measured = k + (notAsked ? 1 : 0);
  if (question.local_epsilon == null) return { kind: "multihot", length: measured, max: m };
  if (question.mechanism === "psfo_grr") return { kind: "histogram", length: measured + m - least, max: 1 };
  return { kind: "multihot", length: measured, max: measured };
}

/** The answer's k bits, and a last "not asked" bit with `notAsked` (set alone for NOT_ASKED);
 * AnswerError for a set the question does not allow. */
export function answerBits(question, answer, notAsked = false) {
  if (notAsked && answer === NOT_ASKED) return [...question.options.map(() => 0), 1];
  const selected = new Set(setEncoder(question)(answer));
  const bits = question.options.map((_, j) => (selected.has(j) ? 1 : 0));
  return notAsked ? [...bits, 0] : bits;
}

/** The measurement of a local mechanism's report: psfo_grr's index, or the report bits (k, or
 * k + 1 with `notAsked`). */
export function reportMeasurement(question, report, notAsked = false) {
  if (question.mechanism === "psfo_grr") return Number(report);
  const measured = question.options.length + (notAsked ? 1 : 0);
  const on = new Set(bitsFromWords(report, measured));
  return Array.from({ length: measured }, (_, j) => (on.has(j) ? 1 : 0));
}
