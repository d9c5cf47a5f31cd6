// FlpBBCGGI19 of draft-irtf-cfrg-vdaf-20, prover side only (the page shards, it never
// verifies): the gadgets Mul, PolyEval and ParallelSum, the validity circuits Count, Sum,
// SumVec, Histogram and MultihotCountVec, and prove(). A port of shared/prio3/{gadgets,
// circuits,flp}.py with the same wire layout: one value per wire per gadget call after the
// wire seed, the gadget polynomial's first values sent in the Lagrange basis.

import { nextPowerOf2 } from "./field.js";

export class MeasurementError extends Error {}

/** Values per wire polynomial: the seed plus one per call, rounded up to a power of two. */
const wirePolyLen = (calls) => nextPowerOf2(1 + calls);
/** Values of the gadget polynomial that the proof carries. */
const gadgetPolyLen = (degree, wireLen) => degree * (wireLen - 1) + 1;

/** From values at the n-th roots to values at the 2n-th roots. */
function doubleEvaluations(field, values) {
  const n = values.length;
  const odd = field.ntt(field.invNtt(values, n), n, true);
  const out = new Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = values[i];
    out[2 * i + 1] = odd[i];
  }
  return out;
}

class Mul {
  constructor() {
    this.ARITY = 2;
    this.DEGREE = 2;
  }

  eval(field, inp) {
    return (inp[0] * inp[1]) % field.MODULUS;
  }

  evalPoly(field, wires) {
    const a = doubleEvaluations(field, wires[0]);
    const b = doubleEvaluations(field, wires[1]);
    return a.map((x, i) => (x * b[i]) % field.MODULUS);
  }
}

class PolyEval {
  constructor(coeffs, numCalls) {
    const c = coeffs.map(BigInt);
    while (c.length > 1 && c[c.length - 1] === 0n) c.pop();
    this.coeffs = c;
    this.ARITY = 1;
    this.DEGREE = c.length - 1;
    this.n = nextPowerOf2(gadgetPolyLen(this.DEGREE, wirePolyLen(numCalls)));
  }

  horner(p, x) {
    let acc = 0n;
    for (let i = this.coeffs.length - 1; i >= 0; i--) acc = ((acc * x + this.coeffs[i]) % p + p) % p;
    return acc;
  }

  eval(field, inp) {
    return this.horner(field.MODULUS, inp[0]);
  }

  evalPoly(field, wires) {
    const values = wires[0];
    const mono = field.invNtt(values, values.length);
    return field.ntt(mono, this.n).map((x) => this.horner(field.MODULUS, x));
  }
}

class ParallelSum {
  constructor(subcircuit, count) {
    this.subcircuit = subcircuit;
    this.count = count;
    this.ARITY = subcircuit.ARITY * count;
    this.DEGREE = subcircuit.DEGREE;
  }

  eval(field, inp) {
    const a = this.subcircuit.ARITY;
    let total = 0n;
    for (let i = 0; i < this.count; i++) total += this.subcircuit.eval(field, inp.slice(i * a, (i + 1) * a));
    return total % field.MODULUS;
  }

  evalPoly(field, wires) {
    const a = this.subcircuit.ARITY;
    const outLen = nextPowerOf2(gadgetPolyLen(this.DEGREE, wires[0].length));
    const total = new Array(outLen).fill(0n);
    for (let i = 0; i < this.count; i++) {
      const part = this.subcircuit.evalPoly(field, wires.slice(i * a, (i + 1) * a));
      for (let j = 0; j < outLen; j++) total[j] += part[j];
    }
    return total.map((t) => t % field.MODULUS);
  }
}

// --- measurements ------------------------------------------------------------------------

/** An exact integer from a Number (safe integer) or BigInt; bools and floats are refused. */
function plainInt(value, what) {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  throw new MeasurementError(`${what} must be an integer`);
}

function bitLength(x) {
  return x === 0n ? 0 : x.toString(2).length;
}

/** Weights 1, 2, 4, ..., and a last one so that all weights sum to max. */
function rangeWeights(max) {
  const bits = bitLength(max);
  const rest = 2n ** BigInt(bits - 1) - 1n;
  const w = [];
  for (let i = 0; i < bits - 1; i++) w.push(1n << BigInt(i));
  w.push(max - rest);
  return w;
}

/** 0/1 vector whose weighted sum (rangeWeights) is value, for 0 <= value <= max. */
function encodeRangeCheckedInt(value, max) {
  if (value < 0n || value > max) throw new MeasurementError(`measurement ${value} is outside [0, ${max}]`);
  const bits = bitLength(max);
  const restAllOnes = 2n ** BigInt(bits - 1) - 1n;
  let rest = value;
  let last = 0n;
  if (value > restAllOnes) {
    rest = value - (max - restAllOnes);
    last = 1n;
  }
  const out = [];
  for (let i = 0; i < bits - 1; i++) out.push((rest >> BigInt(i)) & 1n);
  out.push(last);
  return out;
}

function weightedSum(p, encoded, weights) {
  let acc = 0n;
  for (let i = 0; i < weights.length; i++) acc += encoded[i] * weights[i];
  return acc % p;
}

// --- circuits ------------------------------------------------------------------------------

class Count {
  constructor(field) {
    this.field = field;
    this.GADGETS = [new Mul()];
    this.GADGET_CALLS = [1];
    this.MEAS_LEN = 1;
    this.JOINT_RAND_LEN = 0;
  }

  encode(m) {
    const v = typeof m === "boolean" ? BigInt(m) : plainInt(m, "a count");
    if (v !== 0n && v !== 1n) throw new MeasurementError("a count is 0 or 1 (or a boolean)");
    return [v];
  }

  eval(meas, jointRand, numShares, g) {
    return [this.field.mod(g[0]([meas[0], meas[0]]) - meas[0])];
  }
}

class Sum {
  constructor(field, max) {
    this.field = field;
    this.max = plainInt(max, "max_measurement");
    if (this.max <= 0n || this.max >= field.MODULUS) throw new RangeError("Sum: max_measurement in [1, MODULUS)");
    this.bits = bitLength(this.max);
    this.GADGETS = [new PolyEval([0, -1, 1], this.bits)];
    this.GADGET_CALLS = [this.bits];
    this.MEAS_LEN = this.bits;
    this.JOINT_RAND_LEN = 0;
  }

  encode(m) {
    return encodeRangeCheckedInt(plainInt(m, "a sum"), this.max);
  }

  eval(meas, jointRand, numShares, g) {
    return meas.map((b) => g[0]([b]));
  }
}

/** Shared set-up and range check of the circuits that use ParallelSum(Mul, chunkLength). */
class Chunked {
  setup(field, measLen, chunkLength) {
    if (!(chunkLength >= 1)) throw new RangeError("chunk_length must be at least 1");
    this.field = field;
    this.chunkLength = chunkLength;
    this.GADGETS = [new ParallelSum(new Mul(), chunkLength)];
    this.GADGET_CALLS = [Math.ceil(measLen / chunkLength)];
    this.MEAS_LEN = measLen;
    this.JOINT_RAND_LEN = this.GADGET_CALLS[0];
  }

  rangeCheck(meas, jointRand, numShares, g) {
    const p = this.field.MODULUS;
    const sharesInv = this.field.inv(BigInt(numShares));
    const calls = this.GADGET_CALLS[0];
    const cl = this.chunkLength;
    const padded = meas.concat(new Array(calls * cl - meas.length).fill(0n));
    let total = 0n;
    for (let i = 0; i < calls; i++) {
      const r = jointRand[i];
      let power = r;
      const inputs = new Array(2 * cl);
      for (let j = 0; j < cl; j++) {
        const x = padded[i * cl + j];
        inputs[2 * j] = (power * x) % p;
        inputs[2 * j + 1] = (x - sharesInv + p) % p;
        power = (power * r) % p;
      }
      total += g[0](inputs);
    }
    return [total % p, sharesInv];
  }
}

class SumVec extends Chunked {
  constructor(field, length, max, chunkLength) {
    super();
    this.length = length;
    this.max = plainInt(max, "max_measurement");
    this.bits = bitLength(this.max);
    this.setup(field, length * this.bits, chunkLength);
  }

  encode(m) {
    if (!Array.isArray(m) || m.length !== this.length) {
      throw new MeasurementError(`a sum vector is a list of ${this.length} integers`);
    }
    return m.flatMap((v) => encodeRangeCheckedInt(plainInt(v, "a sum vector entry"), this.max));
  }

  eval(meas, jointRand, numShares, g) {
    return [this.rangeCheck(meas, jointRand, numShares, g)[0]];
  }
}

class Histogram extends Chunked {
  constructor(field, length, chunkLength) {
    super();
    this.length = length;
    this.setup(field, length, chunkLength);
  }

  encode(m) {
    const index = plainInt(m, "a histogram bucket");
    if (index < 0n || index >= BigInt(this.length)) {
      throw new MeasurementError(`bucket ${index} is outside [0, ${this.length})`);
    }
    const out = new Array(this.length).fill(0n);
    out[Number(index)] = 1n;
    return out;
  }

  eval(meas, jointRand, numShares, g) {
    const [check, sharesInv] = this.rangeCheck(meas, jointRand, numShares, g);
    return [check, this.field.mod(meas.reduce((a, b) => a + b, 0n) - sharesInv)];
  }
}

class MultihotCountVec extends Chunked {
  constructor(field, length, maxWeight, chunkLength) {
    super();
    this.length = length;
    this.maxWeight = plainInt(maxWeight, "max_weight");
    this.weights = rangeWeights(this.maxWeight);
    this.setup(field, length + bitLength(this.maxWeight), chunkLength);
  }

  encode(m) {
    if (!Array.isArray(m) || m.length !== this.length) {
      throw new MeasurementError(`a multi-hot vector is a list of ${this.length} booleans`);
    }
    const counts = m.map((v) => (typeof v === "boolean" ? BigInt(v) : plainInt(v, "a multi-hot entry")));
    if (counts.some((v) => v !== 0n && v !== 1n)) throw new MeasurementError("a multi-hot vector holds only 0/1");
    return counts.concat(encodeRangeCheckedInt(counts.reduce((a, b) => a + b, 0n), this.maxWeight));
  }

  eval(meas, jointRand, numShares, g) {
    const [check] = this.rangeCheck(meas, jointRand, numShares, g);
    const weight = meas.slice(0, this.length).reduce((a, b) => a + b, 0n);
    const reported = weightedSum(this.field.MODULUS, meas.slice(this.length), this.weights);
    return [check, this.field.mod(weight - reported)];
  }
}

export const circuits = { Count, Sum, SumVec, Histogram, MultihotCountVec };

// --- the proof -----------------------------------------------------------------------------

export class FlpBBCGGI19 {
  constructor(valid) {
    this.valid = valid;
    this.field = valid.field;
    this.MEAS_LEN = valid.MEAS_LEN;
    this.JOINT_RAND_LEN = valid.JOINT_RAND_LEN;
    this.PROVE_RAND_LEN = valid.GADGETS.reduce((n, g) => n + g.ARITY, 0);
    this.shapes = valid.GADGETS.map((g, i) => {
      const p = wirePolyLen(valid.GADGET_CALLS[i]);
      return { p, glen: gadgetPolyLen(g.DEGREE, p) };
    });
    this.PROOF_LEN = valid.GADGETS.reduce((n, g, i) => n + g.ARITY + this.shapes[i].glen, 0);
  }

  encode(measurement) {
    return this.valid.encode(measurement);
  }

  /** The proof of `meas`: per gadget its wire seeds and the gadget polynomial's values. */
  prove(meas, proveRand, jointRand) {
    const field = this.field;
    const recorders = [];
    let offset = 0;
    const calls = this.valid.GADGETS.map((g, i) => {
      const { p } = this.shapes[i];
      const wires = [];
      for (let w = 0; w < g.ARITY; w++) {
        const wire = new Array(p).fill(0n);
        wire[0] = proveRand[offset + w];
        wires.push(wire);
      }
      offset += g.ARITY;
      const rec = { wires, k: 0 };
      recorders.push(rec);
      return (inp) => {
        rec.k += 1;
        for (let w = 0; w < inp.length; w++) rec.wires[w][rec.k] = inp[w];
        return g.eval(field, inp);
      };
    });
    this.valid.eval(meas, jointRand, 1, calls);
    const proof = [];
    this.valid.GADGETS.forEach((g, i) => {
      const rec = recorders[i];
      for (const wire of rec.wires) proof.push(wire[0]);
      proof.push(...g.evalPoly(field, rec.wires).slice(0, this.shapes[i].glen));
    });
    return proof;
  }
}
