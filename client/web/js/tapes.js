// Sources of draws for tests and benches (randomness.js's interface, `randbelow(n)`): one that
// replays recorded draws (the shared vectors), one that records what another hands out. The
// page never imports this module: what leaves a device is drawn from randomness.js
// secureSource alone.

import { checkBound } from "./randomness.js";

/**
 * A source replaying recorded draws: `draws` is a list of [n, value] (BigInt, Number, or a
 * decimal or 0x-hex string). Throws if a sampler asks for another n than recorded, or for more
 * draws.
 */
export function tapeSource(draws) {
  const tape = draws.map(([n, value]) => [BigInt(n), BigInt(value)]);
  let at = 0;
  return {
    requests: [],
    randbelow(n) {
      checkBound(n);
      if (at >= tape.length) throw new Error(`tape exhausted: randbelow(${n}) was not recorded`);
      const [expected, value] = tape[at];
      if (n !== expected) {
        throw new Error(`draw ${at}: randbelow(${n}) requested, the tape recorded randbelow(${expected})`);
      }
      at += 1;
      this.requests.push(n);
      return value;
    },
    get remaining() { return tape.length - at; },
  };
}

/** Wraps a source and records every (n, value) it hands out (for tests and benchmarks). */
export function recordingSource(inner) {
  return {
    tape: [],
    randbelow(n) {
      const value = inner.randbelow(n);
      this.tape.push([n, value]);
      return value;
    },
  };
}
