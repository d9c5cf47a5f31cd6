// Privacy in a respondent's words ("at most e^ε times more sure", from 50% to e^ε/(1 + e^ε)),
// ε rounded up: the twins of client/review.py's strings. docs/web.md, "What the page does" (3).

import { N, t } from "./i18n.js";

/** Digits `units` times 10^exponent, written out without trailing zeros ("314", -2 -> "3.14"). */
function decimalText(units, exponent) {
  const digits = String(units);
  if (exponent >= 0) return digits + "0".repeat(exponent);
  const padded = digits.padStart(1 - exponent, "0");
  const whole = padded.slice(0, exponent);
  const fraction = padded.slice(exponent).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/** x with float noise below 1e-9 removed, so a ceiling does not step up on it. */
const settle = (x) => Number(x.toFixed(9));

/**
 * ε for people: three significant digits, rounded *up* so that a bound stays a bound
 * (3.13585 -> "3.14", 1 -> "1", 0.25 -> "0.25", 33.87 -> "33.9"; client/review.py
 * epsilon_text, the same strings).
 */
export function epsilonText(epsilon) {
  if (!(epsilon > 0)) return "0";
  const exponent = Math.floor(Math.log10(epsilon)) - 2;
  return decimalText(Math.ceil(settle(epsilon / 10 ** exponent)), exponent);
}

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

const MAX_PERCENT_DECIMALS = 4;

/**
 * How sure, at most, someone who thought something 50/50 can become after seeing a report of
 * this ε: e^ε/(1 + e^ε) as a percentage rounded *up*, whole below 99%, with as many decimals
 * as it takes to stay below 100% (73.1% -> "74%", 99.33% -> "99.4%"); null when even four
 * decimals would say 100% (client/review.py percent_sure, the same strings).
 */
export function percentSure(epsilon) {
  const percent = 100 / (1 + Math.exp(-epsilon));
  for (let decimals = 0; decimals <= MAX_PERCENT_DECIMALS; decimals++) {
    const units = Math.ceil(settle(percent * 10 ** decimals));
    if (units < 100 * 10 ** decimals) return `${decimalText(units, -decimals)}%`;
  }
  return null;
}

/** Where someone who thought something 50/50 can end up after seeing a report of this ε, for
 * the sentences that say "from 50% to …": "at most 74% sure", or "almost certain" past
 * 99.9999% (client/review.py reach_text, the same strings). */
export function reachText(epsilon) {
  const sure = percentSure(epsilon);
  return t("odds.reach", { sure: sure === null ? "none" : N(sure) });
}

/** The odds words' numbers: the factor, the 50% anchor and where it can end up. */
export const oddsParams = (epsilon) => ({ factor: N(oddsFactor(epsilon)), half: N("50%"),
                                          reach: reachText(epsilon) });

/** The privacy of ε in odds words anchored in a probability, for a respondent (client/review.py
 * odds_sentence, the same string; callers add the ε where it is shown). */
export function oddsSentence(epsilon) {
  return epsilon === 0 ? t("odds.nothing") : t("odds.sentence", oddsParams(epsilon));
}

/** One question's privacy in odds words anchored in a probability, with its ε (the form's hint
 * and the review; client/review.py question_privacy, the same string). */
export function questionPrivacy(epsilon) {
  return t("odds.question", { ...oddsParams(epsilon), epsilon: N(epsilonText(epsilon)) });
}

export const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1);
