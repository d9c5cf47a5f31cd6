// The NTT-friendly prime fields Field64 and Field128 of draft-irtf-cfrg-vdaf (port of
// shared/prio3/field.py). Elements are BigInts in [0, p): exact, no floats anywhere. The FLP a
// survey needs works on vectors of at most a few dozen elements, so BigInt costs well under a
// millisecond a report (bench/bench_web_prio3.py measures it).

export function modPow(base, exp, p) {
  let result = 1n;
  let b = base % p;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % p;
    b = (b * b) % p;
    e >>= 1n;
  }
  return result;
}

/** The smallest power of two >= n (n >= 1). */
export function nextPowerOf2(n) {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

export class Field {
  constructor(name, modulus, encodedSize, genOrder, genBase) {
    this.name = name;
    this.MODULUS = modulus;
    this.ENCODED_SIZE = encodedSize;
    this.GEN_ORDER = genOrder;
    this.GENERATOR = modPow(7n, genBase, modulus);
    this.roots = new Map();
  }

  /** x mod p in [0, p) for any BigInt x. */
  mod(x) {
    const r = x % this.MODULUS;
    return r < 0n ? r + this.MODULUS : r;
  }

  inv(x) {
    return modPow(this.mod(x), this.MODULUS - 2n, this.MODULUS);
  }

  /** Little-endian, ENCODED_SIZE bytes per element. */
  encodeVec(vec) {
    const size = this.ENCODED_SIZE;
    const out = new Uint8Array(vec.length * size);
    const view = new DataView(out.buffer);
    for (let i = 0; i < vec.length; i++) {
      const x = vec[i];
      view.setBigUint64(i * size, BigInt.asUintN(64, x), true);
      if (size === 16) view.setBigUint64(i * size + 8, x >> 64n, true);
    }
    return out;
  }

  /** One element from `size` little-endian bytes at `offset` (not reduced). */
  readElement(bytes, offset) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const lo = view.getBigUint64(offset, true);
    return this.ENCODED_SIZE === 16 ? lo | (view.getBigUint64(offset + 8, true) << 64n) : lo;
  }

  /** [W_n ** i for i < n], W_n = GENERATOR ** (GEN_ORDER / n); cached per n. */
  nthRootPowers(n) {
    let cached = this.roots.get(n);
    if (!cached) {
      const p = this.MODULUS;
      const w = modPow(this.GENERATOR, this.GEN_ORDER / BigInt(n), p);
      cached = new Array(n);
      cached[0] = 1n;
      for (let i = 1; i < n; i++) cached[i] = (cached[i - 1] * w) % p;
      this.roots.set(n, cached);
    }
    return cached;
  }

  /** Values of the polynomial `coeffs` at W_n ** i (or s * W_n ** i with s = W_2n). */
  ntt(coeffs, n, setS = false) {
    const p = this.MODULUS;
    const a = new Array(n).fill(0n);
    for (let i = 0; i < coeffs.length; i++) a[i] = coeffs[i];
    if (setS) {
      const s = this.nthRootPowers(2 * n);
      for (let j = 0; j < n; j++) a[j] = (a[j] * s[j]) % p;
    }
    return transform(a, this.nthRootPowers(n), p, false);
  }

  /** Coefficients of the polynomial whose values at W_n ** i are `values`. */
  invNtt(values, n) {
    const p = this.MODULUS;
    const out = transform(values.slice(), this.nthRootPowers(n), p, true);
    const nInv = this.inv(BigInt(n));
    return out.map((x) => (x * nInv) % p);
  }
}

/** Iterative radix-2 NTT (inverse: with W ** -1, unscaled), as shared/prio3/field.py. */
function transform(a, roots, p, inverse) {
  const n = a.length;
  if (n === 1) return a;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    while (j & bit) {
      j ^= bit;
      bit >>= 1;
    }
    j |= bit;
    if (i < j) [a[i], a[j]] = [a[j], a[i]];
  }
  for (let len = 2; len <= n; len <<= 1) {
    const half = len >> 1;
    const step = n / len;
    const ws = new Array(half);
    for (let k = 0; k < half; k++) ws[k] = inverse ? roots[(n - k * step) % n] : roots[k * step];
    for (let start = 0; start < n; start += len) {
      for (let k = 0; k < half; k++) {
        const u = a[start + k];
        const v = (a[start + k + half] * ws[k]) % p;
        a[start + k] = (u + v) % p;
        a[start + k + half] = (u - v + p) % p;
      }
    }
  }
  return a;
}

export const Field64 = new Field("Field64", 2n ** 32n * 4294967295n + 1n, 8, 2n ** 32n,
  4294967295n);
export const Field128 = new Field("Field128", 2n ** 66n * 4611686018427387897n + 1n, 16,
  2n ** 66n, 4611686018427387897n);
