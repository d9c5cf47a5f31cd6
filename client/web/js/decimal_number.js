// Exact decimal numbers for a decimal question (shared/question_types/decimal.py's twin): what a
// respondent types, read exactly (no float), and kept to the question's grid min + j·resolution
// (j = 0..k-1, half up) in integer arithmetic on scaled units, as Python's Decimal does.
// docs/web.md, "Question types on the page".

import { Rational } from "./rational.js";

/** An exact decimal units / 10^scale (units a BigInt, scale >= 0). */
export class Exact {
  constructor(units, scale = 0) {
    this.units = units;
    this.scale = scale;
  }

  /** Both numbers as units on one scale: [a, b, scale]. */
  static align(a, b) {
    const scale = Math.max(a.scale, b.scale);
    return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale),
            scale];
  }

  add(other) {
    const [a, b, scale] = Exact.align(this, other);
    return new Exact(a + b, scale);
  }

  sub(other) {
    const [a, b, scale] = Exact.align(this, other);
    return new Exact(a - b, scale);
  }

  /** times an integer (a BigInt) */
  times(n) { return new Exact(this.units * n, this.scale); }

  cmp(other) {
    const [a, b] = Exact.align(this, other);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** Without trailing zeros after the point ("12.50" -> "12.5", "3.0" -> "3"). */
  normalized() {
    let { units, scale } = this;
    while (scale > 0 && units % 10n === 0n) {
      units /= 10n;
      scale -= 1;
    }
    return new Exact(units, scale);
  }

  /** An exact Rational of the same value. */
  toRational() { return new Rational(this.units, 10n ** BigInt(this.scale)); }

  /** Its digits at this scale: "-12.50", "0.05", "20000" (normalized(): Python's
   * decimal_text, "12.5"). */
  toString() {
    const negative = this.units < 0n;
    const digits = (negative ? -this.units : this.units).toString().padStart(this.scale + 1, "0");
    const whole = digits.slice(0, digits.length - this.scale);
    const fraction = this.scale ? `.${digits.slice(digits.length - this.scale)}` : "";
    return `${negative ? "-" : ""}${whole}${fraction}`;
  }
}

// A decimal as JSON and the manifest write it: sign, digits, an optional point, an exponent.
const NUMBER_TEXT = /^([-+]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]{1,4}))?$/;
const MAX_DIGITS = 40;

/** The exact value of a manifest's number or decimal string (a JSON number is read as its
 * shortest decimal digits, as Python reads a float: Decimal(repr(x))); null if it is not one. */
export function exactOf(value) {
  let text = null;
  if (typeof value === "number" && Number.isFinite(value)) text = String(value);
  else if (typeof value === "string") text = value;
  const m = text === null ? null : NUMBER_TEXT.exec(text);
  if (!m || !(m[2] || m[3]) || m[2].length + (m[3] ?? "").length > MAX_DIGITS) return null;
  const fraction = m[3] ?? "";
  let units = BigInt(`${m[2]}${fraction}` || "0");
  let scale = fraction.length - Number(m[4] ?? 0);
  if (scale < 0) {
    if (-scale > MAX_DIGITS) return null;
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return new Exact(m[1] === "-" ? -units : units, scale);
}

// What a respondent may type: a sign, digits, one decimal mark; spaces between digit groups.
const TYPED = /^([-+\u2212]?)([0-9]*)(?:[.,]([0-9]*))?$/;
const SPACES = /[\s\u00a0\u202f]/g;

/**
 * What a respondent typed, read exactly: {value} (an Exact), or {error} naming why not:
 * "number" (not a number: letters, two signs, no digit) or "separators" (more than one mark,
 * or a mark that is not a decimal mark in `decimalMark`'s language: thousands separators
 * are refused rather than guessed). The decimal mark is "." everywhere, and `decimalMark`
 * (the page's language's: "," in Spanish and French) too; spaces are ignored.
 */
export function readTyped(text, decimalMark = ".") {
  const compact = String(text).replace(SPACES, "");
  const marks = compact.replace(/[^.,]/g, "");
  if (marks.length > 1 || (marks === "," && decimalMark !== ",")) {
    return /^[-+\u2212]?[0-9.,]+$/.test(compact) && /[0-9]/.test(compact)
      ? { error: "separators" } : { error: "number" };
  }
  const m = TYPED.exec(compact);
  if (!m || !(m[2] || m[3])) return { error: "number" };
  const fraction = m[3] ?? "";
  if (m[2].length + fraction.length > MAX_DIGITS) return { error: "number" };
  const units = BigInt(`${m[2]}${fraction}`);
  return { value: new Exact(m[1] === "-" || m[1] === "\u2212" ? -units : units, fraction.length) };
}

/** A decimal question's grid: min + j·resolution for j = 0..k-1 (Exact min and resolution). */
export class Grid {
  constructor(min, max, resolution) {
    Object.assign(this, { min, max, resolution });
    const [span, step] = Exact.align(max.sub(min), resolution);
    if (step <= 0n || span <= 0n || span % step !== 0n) {
      throw new RangeError("(max - min) / resolution must be a whole number >= 1");
    }
    this.k = span / step + 1n;
  }

  /** Grid value j (a BigInt in [0, k)). */
  value(j) {
    return this.min.add(this.resolution.times(j));
  }

  /** The grid index nearest `x` (an Exact within [min, max]), half up: floor((x - min)/r + 1/2)
   * in integers on one scale (DecimalSpec.round_index). */
  nearest(x) {
    const [offset, step] = Exact.align(x.sub(this.min), this.resolution);
    return (2n * offset + step) / (2n * step);  // offset >= 0: BigInt division floors
  }

  /** Whether `x` lies within [min, max]. */
  holds(x) {
    return x.cmp(this.min) >= 0 && x.cmp(this.max) <= 0;
  }

  /** The index of grid value `x` (an Exact), or null when `x` is off the grid or outside. */
  indexOf(x) {
    if (!this.holds(x)) return null;
    const [offset, step] = Exact.align(x.sub(this.min), this.resolution);
    return offset % step === 0n ? offset / step : null;
  }
}
