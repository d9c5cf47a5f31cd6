// A decimal question that depends on randomized answers ("Do you gamble? If yes: how much?"),
// loaded only for a survey that names asked_grid (optional.js): the port of
// shared/mechanisms/asked_grid.py, draw for draw. docs/skip-logic.md, "Decimal questions: an
// asked bit and a grid mean report".

import { bernoulli } from "./randomness.js";
import { Rational, expLower, rationalFloor, simplestBetween } from "./rational.js";
import { loaded } from "./optional.js";  // numeric_mechanisms.js, loaded with this module
import { ManifestMismatch, ONE } from "./mechanisms.js";  // a cycle, safe: loaded after it

const MEAN_PARTS = Object.freeze(["duchi", "piecewise", "hybrid"]);
const EXACT_CELLS = 40000;  // k·cells up to which R_d is computed over every answer
const ROUNDING = new Rational(1n, 10n ** 6n);  // e₁ within this relative distance below e^ε/R_d

/** The larger of two Rationals. */
const larger = (x, y) => (y.gt(x) ? y : x);

/**
 * R_d and R₂ of a mean part on k grid values (asked_grid.py ratio_against_default and the part's
 * privacy_loss), exact: R_d the worst ratio between an answer's row and the default's either
 * way, R₂ the worst column ratio over every answer. Beyond EXACT_CELLS, R_d = R₂ (the part's
 * own exact loss), as Python takes it. Rows come in blocks whose weights share one total in
 * every row, so a ratio of weights is a ratio of probabilities; an all-zero column is skipped
 * (channel_ratio), one zero under some answer and not another is refused.
 */
function ratios(part, k, middle) {
  if (k * part.count > EXACT_CELLS) {
    const r2 = part.loss();
    if (r2 === null) throw new ManifestMismatch(`asked_grid: ${part.name}'s channel has no finite ratio`);
    return { r2, rd: r2 };
  }
  const d = part.blocks(middle).flat();
  const lows = d.slice();
  const highs = d.slice();
  let rd = ONE;
  for (let j = 0; j < k; j++) {
    const row = part.blocks(j).flat();
    row.forEach((w, i) => {
      const top = w > d[i] ? w : d[i];
      const bottom = w > d[i] ? d[i] : w;
      if (top === 0n) return;
      if (bottom === 0n) {
        throw new ManifestMismatch(`asked_grid: ${part.name} has a report impossible under one answer and possible under another`);
      }
      rd = larger(rd, new Rational(top, bottom));
      if (w < lows[i]) lows[i] = w;
      if (w > highs[i]) highs[i] = w;
    });
  }
  let r2 = ONE;
  highs.forEach((top, i) => { if (top !== 0n) r2 = larger(r2, new Rational(top, lows[i])); });
  return { r2, rd };
}

/**
 * The core of asked_grid on k grid values from the signed `params` ({mean, mean_share}; the
 * rest is derived and compared by mechanismFor): an asked bit by randomized response with
 * p = e₁/(e₁ + 1), e₁ the short rational just below e^ε/R_d, and the mean part's report cell at
 * ε₂ = float(rational_floor(ε)·share) on the answer's grid index, or on the middle of the grid
 * d = ⌊(k − 1)/2⌋ when not asked (index k). The certified loss max(R₂, e₁·R_d) is decided
 * exactly against e^ε (WorstOfLosses).
 */
export function askedGridCore(epsilon, k, params) {
  const mean = params && typeof params === "object" ? params.mean : undefined;
  if (!MEAN_PARTS.includes(mean)) {
    throw new ManifestMismatch(`asked_grid: params.mean must be one of ${MEAN_PARTS.join(", ")}`);
  }
  let share;
  try {
    share = Rational.parse(params.mean_share);
  } catch {
    throw new ManifestMismatch("asked_grid: params.mean_share must be a fraction such as \"3/5\"");
  }
  if (!(share.num > 0n && share.lt(ONE))) {
    throw new ManifestMismatch("asked_grid: params.mean_share must lie strictly between 0 and 1");
  }
  const meanEpsilon = rationalFloor(epsilon).mul(share).toNumber();
  const part = loaded("numericMechanisms")[`${mean}Core`](meanEpsilon, k);
  const middle = Math.floor((k - 1) / 2);
  const { r2, rd } = ratios(part, k, middle);
  const eps = Rational.fromNumber(epsilon);
  const bound = expLower(eps).div(rd);
  const low = bound.mul(ONE.sub(ROUNDING));
  if (low.le(ONE)) {
    throw new ManifestMismatch(`asked_grid: at ε = ${epsilon} the mean part leaves nothing for the asked bit`);
  }
  const e1 = simplestBetween(low, bound);
  const p = e1.div(e1.add(ONE));
  const q = ONE.div(e1.add(ONE));
  // WorstOfLosses.within(ε): two asked answers (R₂), an answer against "not asked" (e₁·R_d)
  const ceiling = expLower(eps);
  if ((r2.gt(ONE) && r2.gt(ceiling)) || e1.mul(rd).gt(ceiling)) {
    throw new ManifestMismatch(`asked_grid: the exact privacy loss exceeds ε = ${epsilon}`);
  }
  const K = BigInt(k);
  return {
    name: "asked_grid", k: K, part, p, q, middle,
    params: { mean, mean_share: share.toString(), mean_epsilon: meanEpsilon, default: middle,
              p: p.toString(), q: q.toString() },
    /** [asked bit, report cell]: the bit first, then the part's cell (Python's order). */
    perturbIndex(index, source) {
      const asked = index < K;
      const bit = bernoulli(asked ? p : q, source) ? 1 : 0;
      return [bit, part.perturbIndex(asked ? Number(index) : middle, source)];
    },
  };
}
