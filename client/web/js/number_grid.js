// The number grid the page's number types share (shared/question_types/number_grid.py): the
// cores of a question asked on a grid min, min + step, ..., max by a mean mechanism
// (./numeric_mechanisms.js: duchi, piecewise, hybrid, and one_bit_mean for a series; geometric,
// ./geometric.js), the square wave (./square_wave.js) or both at halves of ε
// (mean_and_distribution), each on the grid's indices with the numbers its reports stand for
// on the question's scale, and the words a review and a receipt say of them. The decimal unit
// (types/decimal.js) imports it; the integer unit (types/integer.js) loads it (optional.js)
// for a survey whose integer names one of these mechanisms (a grid of resolution 1 over
// min..max).

import { Exact, Grid } from "./decimal_number.js";
import { N, t } from "./i18n.js";
import { ManifestMismatch, P, stepWords } from "./mechanisms.js";
import { loaded } from "./optional.js";  // each mechanism's module, for a survey naming it
import { Rational } from "./rational.js";

// numeric_mechanisms.js; one_bit_mean (a series: 1BitMean with α-point rounding) sends the mean
// alone, never as a pair's part
export const ONE_BIT_MEAN = "one_bit_mean";
export const MEAN_CORES = Object.freeze(["duchi", "piecewise", "hybrid", ONE_BIT_MEAN]);
export const MEAN_MECHANISMS = Object.freeze(["duchi", "piecewise", "hybrid", "geometric"]);
export const DISTRIBUTION = "square_wave";
export const PAIR = "mean_and_distribution";
/** The mechanisms a question on the grid may name (its core built here). */
export const GRID_MECHANISMS = Object.freeze([...MEAN_MECHANISMS, ONE_BIT_MEAN, DISTRIBUTION,
                                              PAIR]);

/** The grid of an integer question: min..max one unit apart. */
export function wholeGrid(min, max) {
  return new Grid(new Exact(BigInt(min), 0), new Exact(BigInt(max), 0), new Exact(1n, 0));
}

/** An exact grid value as its plain decimal text ("12.5", "20000": decimal_text). */
export const plain = (x) => x.normalized().toString();

/** A rational number on the question's scale as the words state it: rounded half away from
 * zero to the resolution's decimal places ("-2.3", "31640"). */
export function stated(grid, x) {
  const scale = grid.resolution.normalized().scale;
  const scaled = x.mul(new Rational(10n ** BigInt(scale)));
  const size = scaled.num < 0n ? scaled.neg() : scaled;
  const units = size.add(new Rational(1n, 2n)).floor();
  return N(plain(new Exact(scaled.num < 0n ? -units : units, scale)));
}

/** The grid's bounds as Rationals. */
export const ends = (grid) => [grid.min.toRational(), grid.max.toRational()];

/** What a part sends, in the words the command line says too (DecimalType.device_chances): a
 * number between the lowest and highest numbers its reports stand for. */
function between(grid, low, high) {
  return { text: t("decimal.describe", { low: stated(grid, low), high: stated(grid, high) }) };
}

/** A mean mechanism (duchi, piecewise, hybrid, one_bit_mean) on the grid's indices. */
export function boundedMeanCore(name, epsilon, grid) {
  const core = loaded("numericMechanisms").meanCore(name, epsilon, Number(grid.k));
  const [min, max] = ends(grid);
  const half = max.sub(min).div(2n);
  const value = (v) => min.add(half).add(half.mul(v));  // [-1, 1] -> the question's scale
  const low = value(core.reach.neg());
  const high = value(core.reach);
  return {
    name, k: grid.k, params: core.params,
    perturbIndex: (index, source) => core.perturbIndex(Number(index), source),
    reportValue: (report) => value(core.value(report)),
    describe: () => between(grid, low, high),
    // one_bit_mean in a series (memo.js): the end memoized at the α-point, as the grid value
    // the memo's message holds (OneBitMean.series_answer)
    ...(core.seriesIndex ? {
      seriesIndex: (index, source) => core.seriesIndex(index, source),
      indexAnswer: (index) => plain(grid.value(BigInt(index))),
    } : {}),
  };
}

/** The geometric mechanism on the grid's indices: the report is index + noise, its value
 * min + report·resolution. */
function geometricOnGrid(epsilon, grid) {
  const core = loaded("geometric").geometricCore(epsilon, 0n, grid.k - 1n);
  const rate = core.rate.toNumber();
  return {
    name: "geometric", k: grid.k, params: core.params, rate: core.rate,
    reportBounds: core.reportBounds,
    perturbIndex: (index, source) => core.perturbIndex(index, source),
    reportValue: (report) => grid.value(BigInt(report)).toRational(),
    describe: () => ({ text: t("decimal.geometric", {
      p: P(Math.tanh(rate / 2)), resolution: N(plain(grid.resolution)),
      step: stepWords(Math.exp(rate)) }) }),
  };
}

/** The square wave on the grid's indices: cell y stands for min + (y - B)/(d - 1)·(max - min). */
function squareWaveOnGrid(epsilon, grid, params) {
  const core = loaded("squareWave").squareWave(epsilon, 0n, grid.k - 1n, params);
  const [min, max] = ends(grid);
  const value = (y) => min.add(max.sub(min).mul(new Rational(BigInt(y) - core.half, core.d - 1n)));
  const low = value(0);
  const high = value(core.m - 1n);
  return {
    name: DISTRIBUTION, k: grid.k, params: core.params,
    perturbIndex: (index, source) => core.perturbIndex(index, source),
    reportValue: value,
    describe: () => between(grid, low, high),
  };
}

/** One part's core: a mean mechanism or the square wave (`params` checked by mechanismFor,
 * or by the pair for its parts). */
export function partCore(name, epsilon, grid, params) {
  if (MEAN_CORES.includes(name)) return boundedMeanCore(name, epsilon, grid);
  if (name === "geometric") return geometricOnGrid(epsilon, grid);
  if (name === DISTRIBUTION) return squareWaveOnGrid(epsilon, grid, params);
  throw new ManifestMismatch(`${JSON.stringify(name)} is not a mechanism of a decimal question`);
}

/** mean_and_distribution (shared/mechanisms/numeric_pair.py): the answer sent twice, by the
 * mean mechanism params.mean at ε/2 and by the square wave at ε/2, [mean, distribution]. */
export function pairCore(epsilon, grid, params) {
  const meanName = params && typeof params === "object" ? params.mean : undefined;
  if (!MEAN_MECHANISMS.includes(meanName)) {
    throw new ManifestMismatch(`${PAIR}: params.mean must be one of ${MEAN_MECHANISMS.join(", ")}`);
  }
  const half = epsilon / 2;
  const parts = [partCore(meanName, half, grid), partCore(DISTRIBUTION, half, grid)];
  return {
    name: PAIR, k: grid.k, parts,
    params: { mean: meanName, mean_epsilon: half, mean_params: parts[0].params,
              distribution: DISTRIBUTION, distribution_epsilon: half,
              distribution_params: parts[1].params },
    perturbIndex: (index, source) => parts.map((part) => part.perturbIndex(index, source)),
    describe() {
      const [mean, distribution] = parts.map((part) => part.describe().text);
      return { text: t("decimal.pair", { mean, distribution }) };
    },
  };
}

/** A report in plain words: the number it stands for on the question's scale (the pair's
 * two). */
export function explainer(grid, core) {
  const one = (part, report) => stated(grid, part.reportValue(report));
  return core.parts
    ? (report) => t("decimal.numbers", { mean: one(core.parts[0], report[0]),
                                         distribution: one(core.parts[1], report[1]) })
    : (report) => t("mech.number", { n: one(core, report) });
}

/** The core of mechanism `name` on `grid` (the pair, or one part), with its report in words
 * (`explain`, mechanisms.js explainReport). */
export function gridCore(name, epsilon, grid, params) {
  const core = name === PAIR ? pairCore(epsilon, grid, params) : partCore(name, epsilon, grid, params);
  core.explain = explainer(grid, core);
  return core;
}

/** Whether a report (a part of the pair) of `core` stands for a number outside the grid. */
export function outside(grid, core, report) {
  const [min, max] = ends(grid);
  const parts = core.parts ?? [core];
  const reports = core.parts ? report : [report];
  return parts.some((part, i) => {
    const x = part.reportValue(reports[i]);
    return x.lt(min) || x.gt(max);
  });
}
