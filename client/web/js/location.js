// Location questions (geo_exp): shared/location_channel.py ported draw for draw.
//
// The exponential mechanism over the cells of a designer's grid, with distances rounded UP to
// whole steps of 1/16 cell (a metric) and one rational base β = s/t: report z for true cell x
// has integer weight W_D = t^D·s^(Dmax−D), D = D(x, z), and the device draws randbelow(Z_x),
// Z_x = Σ_z W_D(x,z), then walks the cells in index order (row-major) — the same requests as
// the Python client. The base is re-derived from ε_geo and the grid exactly as in Python, the
// geo-indistinguishability bound is re-checked per offset in exact rationals, and the exact
// plain ε (largest log-ratio between two cells) is recomputed so the manifest's `epsilon` can
// be certified against it. See docs/location.md for the proof.

import { expLower, Rational, simplestBetween } from "./rational.js";

export const QUANTUM = 16;
const SQRT_BITS = 64n;
export const MAX_CELLS = 1024;
export const MAX_SIDE = 64;

/** ⌊√n⌋ of a non-negative BigInt (Newton's method). */
export function isqrt(n) {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** ceil(16·√m), exactly. */
export function steps(m) {
  if (m === 0) return 0;
  const n = BigInt(QUANTUM * QUANTUM * m);
  const root = isqrt(n);
  return Number(root * root === n ? root : root + 1n);
}

function sqrtLower(m) {
  return new Rational(isqrt(BigInt(m) << (2n * SQRT_BITS)), 1n << SQRT_BITS);
}

function bigCmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

/**
 * The certified channel of a grid. Throws Error (the caller turns it into ManifestMismatch)
 * when no rational base above 1 exists or the geo bound fails.
 */
export function geoChannel(rows, cols, cellKm, epsilonGeo) {
  const cells = rows * cols;
  const offsetSteps = [];
  const distinct = new Map();  // m -> D_m, m >= 1
  for (let dr = 0; dr < rows; dr++) {
    const row = [];
    for (let dc = 0; dc < cols; dc++) {
      const m = dr * dr + dc * dc;
      const d = steps(m);
      row.push(d);
      if (m) distinct.set(m, d);
    }
    offsetSteps.push(row);
  }
  if (!distinct.size) throw new Error("a location grid needs at least 2 cells");
  let g = null;
  for (const [m, d] of distinct) {
    const v = sqrtLower(m).div(d);
    if (g === null || v.lt(g)) g = v;
  }
  const scale = Rational.fromNumber(epsilonGeo).mul(Rational.fromNumber(cellKm));
  const target = expLower(scale.mul(g).div(2));
  const excess = target.sub(1);
  const base = simplestBetween(target.sub(excess.div(new Rational(1n << 12n))),
    target.sub(excess.div(new Rational(1n << 60n))));
  if (base.le(new Rational(1n))) throw new Error("ε_geo·cell size is too small for a rational base above 1");
  for (const [m, d] of distinct) {
    if (base.pow(2 * d).gt(expLower(scale.mul(sqrtLower(m))))) {
      throw new Error(`cells ${Math.sqrt(m).toPrecision(4)} cells apart differ by more than e^(ε_geo·d)`);
    }
  }
  // Weights W_D = t^D·s^(Dmax−D) for every D present.
  let dmax = 0;
  const present = new Set([0]);
  for (const d of distinct.values()) { present.add(d); dmax = Math.max(dmax, d); }
  const s = base.num;
  const t = base.den;
  const weights = new Map();
  for (const d of present) weights.set(d, t ** BigInt(d) * s ** BigInt(dmax - d));
  const rowOf = (i) => Math.floor(i / cols);
  const stepsBetween = (a, b) =>
    offsetSteps[Math.abs(rowOf(a) - rowOf(b))][Math.abs((a % cols) - (b % cols))];
  // Totals Z_x on one quarter, mirrored.
  const totals = new Array(cells);
  for (let r = 0; r < (rows + 1) >> 1; r++) {
    for (let c = 0; c < (cols + 1) >> 1; c++) {
      const x = r * cols + c;
      let total = 0n;
      for (let z = 0; z < cells; z++) total += weights.get(stepsBetween(x, z));
      for (const r2 of new Set([r, rows - 1 - r])) {
        for (const c2 of new Set([c, cols - 1 - c])) totals[r2 * cols + c2] = total;
      }
    }
  }
  // The exact worst ratio: max over pairs of W_0·Z_x' / (W_D(x,x')·Z_x), on Pareto candidates.
  const order = [...Array(cells).keys()].sort((a, b) => bigCmp(totals[a], totals[b]) || a - b);
  const rank = new Array(cells);
  order.forEach((x, i) => { rank[x] = i; });
  const w0 = weights.get(0);
  let best = null;
  for (let r = 0; r < (rows + 1) >> 1; r++) {
    for (let c = 0; c < (cols + 1) >> 1; c++) {
      const xp = r * cols + c;
      const d = [...Array(cells).keys()].map((x) => stepsBetween(xp, x));
      const by = [...Array(cells).keys()].sort((a, b) => (d[b] - d[a]) || (rank[a] - rank[b]));
      let lowest = cells;
      for (const x of by) {
        if (rank[x] < lowest) {
          lowest = rank[x];
          if (x === xp) continue;
          const num = w0 * totals[xp];
          const den = weights.get(d[x]) * totals[x];
          if (best === null || num * best[1] > best[0] * den) best = [num, den];
        }
      }
    }
  }
  const ratio = new Rational(best[0], best[1]);
  const logBase = Math.log(base.toNumber());
  return {
    rows, cols, cellKm, epsilonGeo, base, ratio, totals,
    rowWeights(x) {
      const out = new Array(cells);
      for (let z = 0; z < cells; z++) out[z] = weights.get(stepsBetween(x, z));
      return out;
    },
    /** Float P(z | x) for every z (words and the review only). */
    probabilities(x) {
      const w = [];
      let sum = 0;
      for (let z = 0; z < cells; z++) { const v = Math.exp(-logBase * stepsBetween(x, z)); w.push(v); sum += v; }
      return w.map((v) => v / sum);
    },
  };
}

/** Centre distance in km between cells a and b. */
export function distanceKm(grid, a, b) {
  const dr = Math.floor(a / grid.cols) - Math.floor(b / grid.cols);
  const dc = (a % grid.cols) - (b % grid.cols);
  return grid.cellKm * Math.hypot(dr, dc);
}

/** The smallest radius (km) around cell x holding at least `mass` of the reports, and the
 * probability within it (shared/mechanisms/location.py spread_km). */
export function spread(channel, x, mass = 0.5) {
  const p = channel.probabilities(x);
  const cells = p.length;
  const dist = [...Array(cells).keys()].map((z) => distanceKm(channel, x, z));
  const order = [...Array(cells).keys()].sort((a, b) => dist[a] - dist[b] || a - b);
  let cumulative = 0;
  let radius = dist[order[cells - 1]];
  for (const z of order) {
    cumulative += p[z];
    if (cumulative >= mass) { radius = dist[z]; break; }
  }
  const within = p.reduce((acc, v, z) => acc + (dist[z] <= radius * (1 + 1e-12) ? v : 0), 0);
  return { radius, within, own: p[x] };
}
