// BigInt rationals reduced to lowest terms like Python's Fraction (samplers ask for
// randbelow(denominator): the same lowest terms, the same draws) and shared/exact.py's certified
// bounds. docs/browser-randomizers.md.

const ZERO = 0n;
const ONE = 1n;

function gcd(a, b) {
  a = a < ZERO ? -a : a;
  b = b < ZERO ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Floor division of BigInts (Python's //). */
export function floorDiv(a, b) {
  const q = a / b;
  return (a % b !== ZERO && (a < ZERO) !== (b < ZERO)) ? q - ONE : q;
}

export function bitLength(n) {
  if (n < ZERO) n = -n;
  return n === ZERO ? 0 : n.toString(2).length;
}

function toBig(value) {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an exact integer: ${value}`);
    return BigInt(value);
  }
  if (typeof value === "string" && /^[+-]?\d+$/.test(value.trim())) return BigInt(value.trim());
  throw new TypeError(`not an integer: ${String(value)}`);
}

export class Rational {
  /** num/den in lowest terms with den > 0 (what Fraction(num, den) holds). */
  constructor(num, den = ONE) {
    num = toBig(num);
    den = toBig(den);
    if (den === ZERO) throw new RangeError("zero denominator");
    if (den < ZERO) { num = -num; den = -den; }
    const g = gcd(num, den) || ONE;
    this.num = num / g;
    this.den = den / g;
    Object.freeze(this);
  }

  static of(value) {
    return value instanceof Rational ? value : new Rational(value);
  }

  /** "a/b" or "a" (as str(Fraction) writes it), or an integer. */
  static parse(text) {
    if (typeof text !== "string") return new Rational(text);
    const m = /^\s*([+-]?\d+)\s*(?:\/\s*(\d+)\s*)?$/.exec(text);
    if (!m) throw new SyntaxError(`not a rational: ${JSON.stringify(text)}`);
    return new Rational(BigInt(m[1]), m[2] === undefined ? ONE : BigInt(m[2]));
  }

  /** The exact value of a finite double (Fraction(x)). */
  static fromNumber(x) {
    if (typeof x !== "number" || !Number.isFinite(x)) throw new RangeError(`not finite: ${x}`);
    if (x === 0) return new Rational(ZERO);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0);
    const lo = view.getUint32(4);
    const sign = hi >>> 31 ? -ONE : ONE;
    const exponent = (hi >>> 20) & 0x7ff;
    let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let power;
    if (exponent === 0) power = -1074;
    else { mantissa |= 1n << 52n; power = exponent - 1075; }
    return power >= 0 ? new Rational(sign * (mantissa << BigInt(power)))
      : new Rational(sign * mantissa, ONE << BigInt(-power));
  }

  add(o) { o = Rational.of(o); return new Rational(this.num * o.den + o.num * this.den, this.den * o.den); }
  sub(o) { o = Rational.of(o); return new Rational(this.num * o.den - o.num * this.den, this.den * o.den); }
  mul(o) { o = Rational.of(o); return new Rational(this.num * o.num, this.den * o.den); }
  div(o) { o = Rational.of(o); return new Rational(this.num * o.den, this.den * o.num); }
  neg() { return new Rational(-this.num, this.den); }
  inv() { return new Rational(this.den, this.num); }
  pow(e) {
    if (!Number.isInteger(e) || e < 0) throw new RangeError("pow needs an integer >= 0");
    const b = BigInt(e);
    // gcd(a, b) = 1 implies gcd(a^e, b^e) = 1: already in lowest terms, skip the gcd.
    const out = Object.create(Rational.prototype);
    out.num = this.num ** b;
    out.den = this.den ** b;
    return Object.freeze(out);
  }
  cmp(o) { o = Rational.of(o); const d = this.num * o.den - o.num * this.den; return d < ZERO ? -1 : d > ZERO ? 1 : 0; }
  lt(o) { return this.cmp(o) < 0; }
  le(o) { return this.cmp(o) <= 0; }
  gt(o) { return this.cmp(o) > 0; }
  ge(o) { return this.cmp(o) >= 0; }
  eq(o) { return this.cmp(o) === 0; }
  isInteger() { return this.den === ONE; }
  floor() { return floorDiv(this.num, this.den); }

  /** The nearest double, ties to even: what float(Fraction) gives in Python. */
  toNumber() {
    const { num, den } = this;
    if (num === ZERO) return 0;
    const negative = num < ZERO;
    const a = negative ? -num : num;
    // Scale so the integer quotient has >= 66 bits, then a sticky bit for the remainder:
    // Number(BigInt) rounds to nearest-even correctly from there.
    let shift = 66 - (bitLength(a) - bitLength(den));
    if (shift < 0) shift = 0;
    const scaled = a << BigInt(shift);
    const q = scaled / den;
    const sticky = scaled % den === ZERO ? ZERO : ONE;
    let value = Number((q << ONE) | sticky);
    // Divide by 2^(shift+1) in steps that stay exact (no subnormal results expected here).
    let remaining = shift + 1;
    while (remaining > 0) {
      const step = Math.min(remaining, 1000);
      value /= 2 ** step;
      remaining -= step;
    }
    return negative ? -value : value;
  }

  toString() { return this.den === ONE ? this.num.toString() : `${this.num}/${this.den}`; }
  toJSON() { return this.toString(); }
}

// --- shared/exact.py -------------------------------------------------------------------------

const PRECISION_BITS = 192n;
const ROUNDING = new Rational(ONE, ONE << 32n);

/** A rational <= e^x, within about 2^-180 relative, for rational x >= 0 (exact.exp_lower). */
export function expLower(x) {
  x = Rational.of(x);
  if (x.num < ZERO) throw new RangeError("expLower needs x >= 0");
  const scale = ONE << PRECISION_BITS;
  const xFixed = (x.num * scale) / x.den;
  let term = scale;
  let total = scale;
  let n = ONE;
  while (term) {
    term = (term * xFixed) / (scale * n);
    total += term;
    n += ONE;
  }
  return new Rational(total, scale);
}

/** The rational with the smallest denominator in [lo, hi] (exact.simplest_between). */
export function simplestBetween(lo, hi) {
  lo = Rational.of(lo);
  hi = Rational.of(hi);
  if (lo.gt(hi)) throw new RangeError("empty interval");
  if (lo.num <= ZERO && hi.num >= ZERO) return new Rational(ZERO);
  if (hi.num < ZERO) return simplestBetween(hi.neg(), lo.neg()).neg();
  const floorLo = lo.floor();
  if (lo.eq(floorLo)) return new Rational(floorLo);
  if (hi.ge(floorLo + ONE)) return new Rational(floorLo + ONE);
  const inner = simplestBetween(hi.sub(floorLo).inv(), lo.sub(floorLo).inv());
  return inner.inv().add(floorLo);
}

const expFloorCache = new Map();

/** A short rational r <= e^ε standing in for e^ε (exact.rational_exp_floor). */
export function rationalExpFloor(epsilon) {
  let r = expFloorCache.get(epsilon);
  if (r === undefined) {
    const bound = expLower(Rational.fromNumber(epsilon));
    r = simplestBetween(bound.mul(new Rational(ONE).sub(ROUNDING)), bound);
    expFloorCache.set(epsilon, r);
  }
  return r;
}

/** A short rational r <= e^x for an exact rational x >= 0 (exact.rational_exp_floor_of). */
export function rationalExpFloorOf(x) {
  const bound = expLower(x);
  return simplestBetween(bound.mul(new Rational(ONE).sub(ROUNDING)), bound);
}

/** A short rational <= value, within 2^-32 relative (exact.rational_floor). */
export function rationalFloor(value) {
  const exact = Rational.fromNumber(value);
  return simplestBetween(exact.mul(new Rational(ONE).sub(ROUNDING)), exact);
}

/** Python's round() for floats: to nearest, ties to even. */
export function roundHalfEven(x) {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff < 0.5) return f;
  if (diff > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}
