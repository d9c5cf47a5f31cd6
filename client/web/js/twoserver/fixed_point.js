// A number kept on a grid, measured in the two-server mode exactly as
// shared/two_server/fixed_point.py measures it (tests/web/test_fixed_point_vectors.py):
// the grid origin + j·step, j in [0, points − 1], its mean as Prio3Sum(max = points − 1) of j,
// its distribution as Prio3Histogram of its bin (the designer's edges; "not asked" the last
// cell of a hidden follow-up), or both as Prio3Histogram + Prio3SumVec(1, points − 1) under one
// key (`histogramSum`, the servers scale the histogram's shares by `scale`: `pairSplit`).
// A question type's unit builds the grid ({origin, step: Rational, points, edges: [Rational],
// mean, notAsked}) and asks `gridEncoding` and `gridMeasurement`; twoserver/upload.js shards.
// Loaded only for a two-server survey with such a question: optional.js "twoServerGrid", named
// in the type's `twoServer` modules (js/types/index.js), read with `loaded("twoServerGrid")`.

import { concat } from "../bytes.js";
import { Rational } from "../rational.js";
import { prio3Histogram, prio3SumVec } from "../prio3/vdaf.js";

/** The largest integer c >= 0 with c³ <= n (BigInt; asked_pair.icbrt). */
export function icbrt(n) {
  if (n <= 0n) return 0n;
  let c = 1n << BigInt(Math.floor((n.toString(2).length + 2) / 3));
  for (;;) {
    const next = (2n * c + n / (c * c)) / 3n;
    if (next >= c) break;
    c = next;
  }
  while (c * c * c > n) c -= 1n;
  while ((c + 1n) ** 3n <= n) c += 1n;
  return c;
}

/** The grid's largest index R. */
const topOf = (grid) => grid.points - 1;

/** The edges the histogram measures: the designer's, else the whole range as one bin. */
function binsOf(grid) {
  if (grid.edges.length) return grid.edges;
  return [grid.origin, grid.origin.add(grid.step.mul(topOf(grid)))];
}

/** The histogram's cells: its bins, and "not asked" last where the question has it. */
export const cellsOf = (grid) => binsOf(grid).length - 1 + (grid.notAsked ? 1 : 0);

/** The bin of grid point j: [e_i, e_(i+1)), the last closed (fixed_point.Grid.bin_of). */
export function binOf(grid, j) {
  const bins = binsOf(grid);
  const value = grid.origin.add(grid.step.mul(j));
  let b = 0;
  while (b + 1 < bins.length - 1 && bins[b + 1].le(value)) b += 1;
  return b;
}

/** s, the histogram's scale in a pair (fixed_point.pair_split): the even split when the
 *  distribution is measured, else the integer s >= 1 minimizing (2s + R)²(1 + R²/s²). */
export function pairSplit(grid) {
  const r = BigInt(topOf(grid));
  if (grid.edges.length) return Math.max(1, Math.floor(Number(r + 1n) / 2));
  const root = icbrt(r ** 3n / 2n);
  const cost = (s) => new Rational((2n * s + r) ** 2n * (s * s + r * r), s * s);
  const candidates = [...new Set([root > 1n ? root : 1n, root + 1n])].sort((a, b) =>
    (a < b ? -1 : a > b ? 1 : 0));
  let best = candidates[0];
  for (const s of candidates.slice(1)) if (cost(s).lt(cost(best))) best = s;
  return Number(best);
}

/** How the number is measured: {kind, length, max, offset, scale} (fixed_point.grid_encoding). */
export function gridEncoding(grid) {
  const top = topOf(grid);
  if (grid.mean && !grid.edges.length && !grid.notAsked) {
    return { kind: "sum", length: 1, max: top, offset: 0 };
  }
  if (!grid.mean) return { kind: "histogram", length: cellsOf(grid), max: 1, offset: 0 };
  return { kind: "histogram_sum", length: cellsOf(grid) + 1, max: top, offset: 0,
    scale: pairSplit(grid) };
}

/** The measurement of grid index j (null: "not asked"): j, the bin, or [cell, [j]]. */
export function gridMeasurement(grid, j) {
  const encoding = gridEncoding(grid);
  if (j !== null && !(Number.isSafeInteger(j) && j >= 0 && j <= topOf(grid))) {
    throw new RangeError(`grid index ${j} is outside [0, ${topOf(grid)}]`);
  }
  const cell = j === null ? cellsOf(grid) - 1 : binOf(grid, j);
  if (encoding.kind === "sum") return j;
  if (encoding.kind === "histogram") return cell;
  return [cell, [j === null ? 0 : j]];
}

/** The ParallelSum chunk length of the shortest proof (shared/prio3 best_chunk_length). */
function bestChunk(measLen) {
  let best = 1;
  let bestLen = Infinity;
  for (let chunk = 1; chunk <= measLen; chunk++) {
    const calls = Math.ceil(measLen / chunk);
    let p = 1;
    while (p < 1 + calls) p *= 2;
    const len = 2 * chunk + 2 * (p - 1) + 1;
    if (len < bestLen) [best, bestLen] = [chunk, len];
  }
  return best;
}

/**
 * Prio3Histogram(cells) of the bin then Prio3SumVec(1, max) of j under one key
 * (pair_vdaf.HistogramSumPrio3): same nonce and context; `rand`, the public share and each
 * input share are the histogram's bytes followed by the sum's.
 */
export function histogramSum(cells, max) {
  const histogram = prio3Histogram(cells, bestChunk(cells));
  const total = prio3SumVec(1, max, bestChunk(max.toString(2).length));
  return {
    RAND_SIZE: histogram.RAND_SIZE + total.RAND_SIZE,
    shard(ctx, [cell, j], nonce, rand) {
      const [pubH, sharesH] = histogram.shard(ctx, cell, nonce, rand.slice(0, histogram.RAND_SIZE));
      const [pubS, sharesS] = total.shard(ctx, j, nonce, rand.slice(histogram.RAND_SIZE));
      return [concat(pubH, pubS), sharesH.map((share, i) => concat(share, sharesS[i]))];
    },
  };
}
