// The named randomized-response designs of shared/mechanisms/rr_designs.py and
// channel_design.py, ported draw for draw: warner, crosswise, forced_response,
// unrelated_question and matrix. A design's params are its inputs (exact fractions as strings);
// the channel P(report | answer) is rebuilt from them in BigInt rationals, checked exactly as
// Python checks it (rows sum to 1, every report possible under every answer, ε within the
// stated one), and sampled like ChannelDesign.perturb_index: one draw below the row's common
// denominator. The params must be in the canonical form Python writes, or the page refuses.
// Loaded only for a survey that names one (optional.js), with its words.

import { quoted, t } from "./i18n.js";
import { P, yesNoWords } from "./mechanisms.js";  // a cycle, safe: used only when describing
import { expLower, Rational } from "./rational.js";

/** Each design's name in the respondent's words (shared/mechanisms known_as, the same). */
const KNOWN_AS = Object.freeze({
  warner: "design.warner",
  crosswise: "design.crosswise",
  forced_response: "design.forcedResponse",
  unrelated_question: "design.unrelatedQuestion",
  matrix: "design.matrix",
});

const ONE = new Rational(1n);
const ZERO = new Rational(0n);
const MAX_DENOMINATOR = 10n ** 12n;
const MAX_REPORTS = 256;

function gcd(a, b) { while (b) [a, b] = [b, a % b]; return a; }
const lcm = (a, b) => (a / gcd(a, b)) * b;

/** Option names as params use them: "no"/"yes" for yes/no answers, else the labels. */
const optionNames = (values, yesNo) => (yesNo ? ["no", "yes"] : values);

/** The design named by `question` (its `unit`, js/types/, gives its answer values: a yes/no
 * question's are false and true, and its reports are too). */
export function designCore(question, Mismatch, unit) {
  const name = question.mechanism;
  const where = `question ${JSON.stringify(question.id)}: ${name}`;
  const params = question.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    throw new Mismatch(`${where}: parameters must be a table`);
  }
  const prob = (value, at) => {
    let r;
    try {
      if (typeof value !== "string") throw new SyntaxError("not a string");
      r = Rational.parse(value);
    } catch {
      throw new Mismatch(`${where}: ${at} must be an exact fraction "a/b"`);
    }
    if (r.lt(ZERO) || r.gt(ONE) || r.den > MAX_DENOMINATOR) {
      throw new Mismatch(`${where}: ${at} must be a probability with a denominator up to 10^12`);
    }
    return r;
  };
  const values = unit.values(question);
  const yesNo = values.every((v) => typeof v === "boolean");
  const names = optionNames(values, yesNo);
  const table = (value, at) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)
        || Object.keys(value).length !== names.length || !names.every((n) => n in value)) {
      throw new Mismatch(`${where}: ${at} must give one probability per answer`);
    }
    return names.map((n) => prob(value[n], `${at}.${n}`));
  };
  const asTable = (values) => Object.fromEntries(names.map((n, i) => [n, values[i].toString()]));
  const forced = (p, q) => names.map((_, x) => names.map((__, y) => (x === y ? p : ZERO).add(q[y])));
  let rows;
  let canonical;
  if (name === "warner" || name === "crosswise") {
    const key = name === "warner" ? "p" : "prevalence";
    const p = prob(params[key], key);
    rows = [[p, ONE.sub(p)], [ONE.sub(p), p]];
    canonical = { [key]: p.toString() };
  } else if (name === "forced_response") {
    const p = prob(params.p_truth, "p_truth");
    const q = table(params.forced, "forced");
    rows = forced(p, q);
    canonical = { p_truth: p.toString(), forced: asTable(q) };
  } else if (name === "unrelated_question") {
    const p = prob(params.p_truth, "p_truth");
    if (!p.lt(ONE)) throw new Mismatch(`${where}: p_truth must be below 1`);
    const prevalence = yesNo ? [ONE.sub(prob(params.prevalence, "prevalence")),
      prob(params.prevalence, "prevalence")] : table(params.prevalence, "prevalence");
    rows = forced(p, prevalence.map((pi) => ONE.sub(p).mul(pi)));
    canonical = { p_truth: p.toString(),
                  prevalence: yesNo ? prevalence[1].toString() : asTable(prevalence) };
  } else if (name === "matrix") {
    const raw = params.matrix;
    if (!Array.isArray(raw) || raw.length !== names.length
        || raw.some((r) => !Array.isArray(r) || r.length !== raw[0].length
                          || r.length < 2 || r.length > MAX_REPORTS)) {
      throw new Mismatch(`${where}: matrix must list one row of report probabilities per answer`);
    }
    rows = raw.map((r, x) => r.map((v, y) => prob(v, `matrix[${x}][${y}]`)));
    canonical = { matrix: rows.map((r) => r.map((v) => v.toString())) };
  } else {
    throw new Mismatch(`${where}: not a design`);
  }
  if (rows.some((r) => !r.reduce((a, b) => a.add(b), ZERO).eq(ONE))) {
    throw new Mismatch(`${where}: each answer's report probabilities must sum to 1`);
  }
  // The exact worst ratio over reports (exact.channel_ratio), then PrivacyLoss.within.
  let worst = ONE;
  for (let y = 0; y < rows[0].length; y++) {
    const column = rows.map((r) => r[y]);
    const high = column.reduce((a, b) => (a.ge(b) ? a : b));
    const low = column.reduce((a, b) => (a.le(b) ? a : b));
    if (high.eq(ZERO)) continue;
    if (low.eq(ZERO)) throw new Mismatch(`${where}: a report is impossible under some answer, so it would prove the answer`);
    const ratio = high.div(low);
    if (ratio.gt(worst)) worst = ratio;
  }
  if (worst.eq(ONE)) throw new Mismatch(`${where}: the report would not depend on the answer`);
  if (worst.gt(expLower(Rational.fromNumber(question.epsilon)))) {
    throw new Mismatch(`${where}: the design's exact privacy loss exceeds ε = ${question.epsilon}`);
  }
  const binaryReports = yesNo && name !== "matrix";
  const cumulative = rows.map((r) => {
    const den = r.reduce((a, p) => lcm(a, p.den), 1n);
    let total = 0n;
    return { den, bounds: r.map((p) => (total += p.num * (den / p.den))) };
  });
  return {
    name, k: names.length, params: canonical, rows,
    perturbIndex(index, source) {
      const { den, bounds } = cumulative[index];
      const u = source.randbelow(den);
      const y = bounds.findIndex((b) => u < b);
      return binaryReports ? y === 1 : y;
    },
    /** With an answer's index: what the device will send for it (client/review.py chances,
     * the same sentence); without: every answer's chances. */
    describe(labels, index = undefined) {
      const words = name === "crosswise" ? [t("design.differ"), t("design.same")]
        : name === "matrix" ? rows[0].map((_, y) => t("design.report", { n: y }))
          : yesNo ? [t("word.noQuoted"), t("word.yesQuoted")]
            : labels.map(quoted);
      // the report that names the real answer is marked, as binary_rr and grr do (a crosswise
      // or matrix report names no answer)
      const mine = index === undefined || name === "crosswise" || name === "matrix" ? -1 : index;
      const listed = (x) => rows[x].map((p, y) => t(y === mine ? "design.chanceYours"
        : "design.chance", { report: words[y], p: P(p.toNumber()) })).join(", ");
      if (index !== undefined) {
        return { text: t("design.chances", { design: t(KNOWN_AS[name]), chances: listed(index) }) };
      }
      return { text: t("design.general", { cases: labels.map((label, x) => t("design.case", {
        answer: typeof label === "boolean" ? yesNoWords(label) : quoted(label),
        chances: listed(x) })).join("; ") }) };
    },
    explain(report, labels) {
      if (name === "crosswise") return t(report ? "design.same" : "design.differ");
      if (name === "matrix") return t("design.report", { n: report });
      if (binaryReports) return yesNoWords(report);
      return t("mech.option", { option: quoted(labels[report]) });
    },
  };
}
