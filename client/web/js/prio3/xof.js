// XofTurboShake128 of draft-irtf-cfrg-vdaf-20 (port of shared/prio3/xof.py): TurboSHAKE128 with
// domain byte 1 over len(dst) (2 bytes LE) || dst || len(seed) (1 byte) || seed || binder.

import { concat } from "../bytes.js";
import { TurboShake128 } from "./turboshake.js";

export const VERSION = 18;  // the draft's VERSION constant, as shared/prio3/xof.py
export const SEED_SIZE = 32;

/** The draft's domain separation tag prefix: version, class, algorithm id, usage. */
export function formatDst(algoClass, algo, usage) {
  return Uint8Array.of(VERSION, algoClass, (algo >>> 24) & 255, (algo >>> 16) & 255,
    (algo >>> 8) & 255, algo & 255, (usage >> 8) & 255, usage & 255);
}

export class XofTurboShake128 {
  constructor(seed, dst, binder) {
    if (seed.length > 255) throw new RangeError("a seed has at most 255 bytes");
    if (dst.length > 65535) throw new RangeError("a dst has at most 65535 bytes");
    this.h = new TurboShake128(1);
    this.h.update(Uint8Array.of(dst.length & 255, dst.length >> 8)).update(dst)
      .update(Uint8Array.of(seed.length)).update(seed).update(binder);
  }

  next(length) {
    return this.h.read(length);
  }

  /** The next `length` field elements by rejection sampling (masks are whole bytes here). */
  nextVec(field, length) {
    const size = field.ENCODED_SIZE;
    const p = field.MODULUS;
    const out = [];
    while (out.length < length) {
      const x = field.readElement(this.h.read(size), 0);
      if (x < p) out.push(x);
    }
    return out;
  }

  static deriveSeed(seed, dst, binder) {
    return new XofTurboShake128(seed, dst, binder).next(SEED_SIZE);
  }

  static expandIntoVec(field, seed, dst, binder, length) {
    return new XofTurboShake128(seed, dst, binder).nextVec(field, length);
  }
}
