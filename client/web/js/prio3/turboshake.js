// TurboSHAKE128 (RFC 9861): Keccak-p[1600, 12 rounds], rate 168 bytes, a domain byte.
//
// Written here rather than vendored: the one function needed is ~100 lines over 32-bit halves
// of the 64-bit lanes, and it is proven by the draft's XofTurboShake128 vector and by every
// Prio3 vector (tests/web/test_prio3_vectors.py). Lane i of the state is (lo, hi) =
// (s[2i], s[2i+1]), bytes in little-endian order as the specification lays them out.

const RATE = 168;

// The last 12 round constants of Keccak-f[1600] (rounds 12..23), as [lo, hi] 32-bit halves.
const RC = [
  0x8000808b, 0x00000000, 0x0000008b, 0x80000000, 0x00008089, 0x80000000,
  0x00008003, 0x80000000, 0x00008002, 0x80000000, 0x00000080, 0x80000000,
  0x0000800a, 0x00000000, 0x8000000a, 0x80000000, 0x80008081, 0x80000000,
  0x00008080, 0x80000000, 0x80000001, 0x00000000, 0x80008008, 0x80000000,
];

// Rotation offsets (rho) by lane index x + 5y, and the lane each one moves to (pi).
const RHO = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39,
  41, 45, 15, 21, 8, 18, 2, 61, 56, 14];
const PI = new Array(25);
for (let x = 0; x < 5; x++) {
  for (let y = 0; y < 5; y++) PI[x + 5 * y] = y + 5 * ((2 * x + 3 * y) % 5);
}

/** Keccak-p[1600, 12] on a state of 50 32-bit words, in place. */
export function keccakP12(s) {
  const c = new Uint32Array(10);
  const b = new Uint32Array(50);
  for (let round = 0; round < 12; round++) {
    // theta
    for (let x = 0; x < 5; x++) {
      c[2 * x] = s[2 * x] ^ s[2 * x + 10] ^ s[2 * x + 20] ^ s[2 * x + 30] ^ s[2 * x + 40];
      c[2 * x + 1] = s[2 * x + 1] ^ s[2 * x + 11] ^ s[2 * x + 21] ^ s[2 * x + 31] ^ s[2 * x + 41];
    }
    for (let x = 0; x < 5; x++) {
      const n = 2 * ((x + 1) % 5);
      const p = 2 * ((x + 4) % 5);
      const dLo = c[p] ^ ((c[n] << 1) | (c[n + 1] >>> 31));
      const dHi = c[p + 1] ^ ((c[n + 1] << 1) | (c[n] >>> 31));
      for (let y = 0; y < 25; y += 5) {
        s[2 * (x + y)] ^= dLo;
        s[2 * (x + y) + 1] ^= dHi;
      }
    }
    // rho and pi
    for (let i = 0; i < 25; i++) {
      const lo = s[2 * i];
      const hi = s[2 * i + 1];
      let r = RHO[i];
      let rl = lo;
      let rh = hi;
      if (r >= 32) { rl = hi; rh = lo; r -= 32; }
      const j = 2 * PI[i];
      if (r === 0) {
        b[j] = rl;
        b[j + 1] = rh;
      } else {
        b[j] = (rl << r) | (rh >>> (32 - r));
        b[j + 1] = (rh << r) | (rl >>> (32 - r));
      }
    }
    // chi
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = 2 * (y + x);
        const i1 = 2 * (y + ((x + 1) % 5));
        const i2 = 2 * (y + ((x + 2) % 5));
        s[i] = b[i] ^ (~b[i1] & b[i2]);
        s[i + 1] = b[i + 1] ^ (~b[i1 + 1] & b[i2 + 1]);
      }
    }
    // iota
    s[0] ^= RC[2 * round];
    s[1] ^= RC[2 * round + 1];
  }
}

/** An absorbing-then-squeezing TurboSHAKE128 instance with domain byte `domain` (1..0x7f). */
export class TurboShake128 {
  constructor(domain) {
    if (!(domain >= 1 && domain <= 0x7f)) throw new RangeError("domain byte in [1, 0x7f]");
    this.domain = domain;
    this.state = new Uint32Array(50);
    this.bytes = new Uint8Array(this.state.buffer);  // little-endian on every browser we run
    this.pos = 0;
    this.squeezing = false;
  }

  /** Absorb more message bytes (before the first read). */
  update(data) {
    if (this.squeezing) throw new Error("TurboSHAKE128: update after read");
    const st = this.bytes;
    for (let i = 0; i < data.length; i++) {
      st[this.pos++] ^= data[i];
      if (this.pos === RATE) {
        keccakP12(this.state);
        this.pos = 0;
      }
    }
    return this;
  }

  /** The next `length` bytes of output. */
  read(length) {
    const st = this.bytes;
    if (!this.squeezing) {
      st[this.pos] ^= this.domain;
      st[RATE - 1] ^= 0x80;
      keccakP12(this.state);
      this.pos = 0;
      this.squeezing = true;
    }
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) {
      if (this.pos === RATE) {
        keccakP12(this.state);
        this.pos = 0;
      }
      out[i] = st[this.pos++];
    }
    return out;
  }
}
