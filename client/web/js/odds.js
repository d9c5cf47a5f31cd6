// Privacy in words a respondent understands: ε-local differential privacy means that anyone
// who sees what the device sends can be at most e^ε times more sure of the real answer than
// before (posterior odds over prior odds). The ε itself goes in a "details" control.

import { g } from "./manifest.js";

/**
 * e^ε rounded *up*, so "at most N times" stays true: one decimal below 10, whole numbers below
 * 1000, three significant digits above (client/review.py odds_factor, the same strings).
 */
export function oddsFactor(epsilon) {
  const n = Math.exp(epsilon);
  if (n < 10) return String(Math.ceil(Number((n * 10).toFixed(9))) / 10);
  if (n < 1000) return String(Math.ceil(Number(n.toFixed(9))));
  const unit = 10 ** (Math.floor(Math.log10(n)) - 2);
  return (Math.ceil(n / unit) * unit).toLocaleString("en-US");
}

/** The privacy of ε in odds words, for a respondent. */
export function oddsSentence(epsilon) {
  if (epsilon === 0) return "what your device sends reveals nothing new about your answers";
  return `anyone who sees what your device sends can be at most ${oddsFactor(epsilon)} times ` +
         "more sure of your real answers than before";
}

/** One question's privacy in odds words, with its ε (the form's hint and the review;
 * client/review.py question_privacy, the same string). */
export function questionPrivacy(epsilon) {
  return `Privacy: anyone who sees what is sent can be at most ${oddsFactor(epsilon)} times ` +
         `more sure of this answer (ε = ${g(epsilon)}).`;
}

export const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1);

