// Prio3 sharding of draft-irtf-cfrg-vdaf-20 (port of shared/prio3/vdaf.py, client side only):
// encode the measurement, split it into a leader share and helper seeds, prove it, split the
// proof, and encode the public share and input shares as bytes, exactly as the Python library.
//
// `shard(ctx, measurement, nonce, rand)` takes all randomness as the `rand` bytes (RAND_SIZE),
// as the draft does; `shardWith(ctx, measurement, nonce, source)` draws them from a random
// source (randomness.js: `secureSource` = crypto.getRandomValues; a tape in tests).

import { Field64, Field128 } from "./field.js";
import { circuits, FlpBBCGGI19 } from "./flp.js";
import { concat } from "../bytes.js";
import { formatDst, SEED_SIZE, XofTurboShake128 } from "./xof.js";

const USAGE_MEAS_SHARE = 1;
const USAGE_PROOF_SHARE = 2;
const USAGE_JOINT_RANDOMNESS = 3;
const USAGE_PROVE_RANDOMNESS = 4;
const USAGE_JOINT_RAND_SEED = 6;
const USAGE_JOINT_RAND_PART = 7;

export const NONCE_SIZE = 16;

export class Prio3 {
  constructor(vdafId, valid, { shares = 2, proofs = 1, name = "Prio3" } = {}) {
    if (!(shares >= 2 && shares < 256 && proofs >= 1 && proofs < 256)) {
      throw new RangeError("Prio3: shares in [2, 256) and proofs in [1, 256)");
    }
    this.ID = vdafId;
    this.name = name;
    this.flp = new FlpBBCGGI19(valid);
    this.field = valid.field;
    this.SHARES = shares;
    this.PROOFS = proofs;
    this.NONCE_SIZE = NONCE_SIZE;
    this.RAND_SIZE = SEED_SIZE * shares * (this.flp.JOINT_RAND_LEN ? 2 : 1);
  }

  dst(usage, ctx) {
    return concat(formatDst(0, this.ID, usage), ctx);
  }

  /** (publicShare bytes, [leader input share bytes, helper input share bytes, ...]). */
  shard(ctx, measurement, nonce, rand) {
    if (nonce.length !== NONCE_SIZE) throw new RangeError(`nonce must have ${NONCE_SIZE} bytes`);
    if (rand.length !== this.RAND_SIZE) throw new RangeError(`rand must have ${this.RAND_SIZE} bytes`);
    const meas = this.flp.encode(measurement);
    const field = this.field;
    const p = field.MODULUS;
    const seeds = [];
    for (let i = 0; i < this.RAND_SIZE; i += SEED_SIZE) seeds.push(rand.slice(i, i + SEED_SIZE));
    const useJr = this.flp.JOINT_RAND_LEN > 0;
    const helpers = this.SHARES - 1;
    let helperShares;
    let helperBlinds;
    let leaderBlind = null;
    let proveSeed;
    if (useJr) {
      helperShares = [];
      helperBlinds = [];
      for (let j = 0; j < helpers; j++) {
        helperShares.push(seeds[2 * j]);
        helperBlinds.push(seeds[2 * j + 1]);
      }
      leaderBlind = seeds[2 * helpers];
      proveSeed = seeds[2 * helpers + 1];
    } else {
      helperShares = seeds.slice(0, helpers);
      helperBlinds = new Array(helpers).fill(null);
      proveSeed = seeds[helpers];
    }

    let leaderMeas = meas.slice();
    const parts = [];
    for (let j = 0; j < helpers; j++) {
      const share = XofTurboShake128.expandIntoVec(field, helperShares[j],
        this.dst(USAGE_MEAS_SHARE, ctx), Uint8Array.of(j + 1), this.flp.MEAS_LEN);
      leaderMeas = leaderMeas.map((a, i) => (a - share[i] + p) % p);
      if (useJr) parts.push(this.jointRandPart(ctx, j + 1, helperBlinds[j], share, nonce));
    }
    let publicShare = new Uint8Array(0);
    let jointRands = [];
    if (useJr) {
      parts.unshift(this.jointRandPart(ctx, 0, leaderBlind, leaderMeas, nonce));
      publicShare = concat(...parts);
      const seed = XofTurboShake128.deriveSeed(new Uint8Array(SEED_SIZE),
        this.dst(USAGE_JOINT_RAND_SEED, ctx), publicShare);
      jointRands = XofTurboShake128.expandIntoVec(field, seed, this.dst(USAGE_JOINT_RANDOMNESS, ctx),
        Uint8Array.of(this.PROOFS), this.flp.JOINT_RAND_LEN * this.PROOFS);
    }
    const prl = this.flp.PROVE_RAND_LEN;
    const jrl = this.flp.JOINT_RAND_LEN;
    const proveRands = XofTurboShake128.expandIntoVec(field, proveSeed,
      this.dst(USAGE_PROVE_RANDOMNESS, ctx), Uint8Array.of(this.PROOFS), prl * this.PROOFS);
    let proofs = [];
    for (let i = 0; i < this.PROOFS; i++) {
      proofs = proofs.concat(this.flp.prove(meas, proveRands.slice(i * prl, (i + 1) * prl),
        jointRands.slice(i * jrl, (i + 1) * jrl)));
    }
    for (let j = 0; j < helpers; j++) {
      const share = XofTurboShake128.expandIntoVec(field, helperShares[j],
        this.dst(USAGE_PROOF_SHARE, ctx), Uint8Array.of(this.PROOFS, j + 1),
        this.flp.PROOF_LEN * this.PROOFS);
      proofs = proofs.map((a, i) => (a - share[i] + p) % p);
    }
    const inputShares = [concat(field.encodeVec(leaderMeas), field.encodeVec(proofs),
      leaderBlind || new Uint8Array(0))];
    for (let j = 0; j < helpers; j++) {
      inputShares.push(concat(helperShares[j], helperBlinds[j] || new Uint8Array(0)));
    }
    return [publicShare, inputShares];
  }

  /** shard() with `rand` drawn from a random source ({ bytes(n): Uint8Array }). */
  shardWith(ctx, measurement, nonce, source) {
    return this.shard(ctx, measurement, nonce, source.bytes(this.RAND_SIZE));
  }

  jointRandPart(ctx, aggId, blind, measShare, nonce) {
    return XofTurboShake128.deriveSeed(blind, this.dst(USAGE_JOINT_RAND_PART, ctx),
      concat(Uint8Array.of(aggId), nonce, this.field.encodeVec(measShare)));
  }
}

export const PRIO3_COUNT_ID = 0x00000001;
export const PRIO3_SUM_ID = 0x00000002;
export const PRIO3_SUMVEC_ID = 0x00000003;
export const PRIO3_HISTOGRAM_ID = 0x00000004;
export const PRIO3_MULTIHOT_COUNTVEC_ID = 0x00000005;
export const PRIO3_SUMVEC_MULTIPROOF_ID = 0xffffffff;

export const prio3Count = ({ shares = 2 } = {}) =>
  new Prio3(PRIO3_COUNT_ID, new circuits.Count(Field64), { shares, name: "Prio3Count" });

export const prio3Sum = (maxMeasurement, { shares = 2 } = {}) =>
  new Prio3(PRIO3_SUM_ID, new circuits.Sum(Field64, maxMeasurement), { shares, name: "Prio3Sum" });

export const prio3Histogram = (length, chunkLength, { shares = 2 } = {}) =>
  new Prio3(PRIO3_HISTOGRAM_ID, new circuits.Histogram(Field128, length, chunkLength),
    { shares, name: "Prio3Histogram" });

export const prio3SumVec = (length, maxMeasurement, chunkLength, { shares = 2 } = {}) =>
  new Prio3(PRIO3_SUMVEC_ID, new circuits.SumVec(Field128, length, maxMeasurement, chunkLength),
    { shares, name: "Prio3SumVec" });

/** The draft's test codepoint 0xFFFFFFFF: SumVec over a chosen field with several proofs. */
export const prio3SumVecMultiproof = (field, proofs, length, maxMeasurement, chunkLength,
  { shares = 2 } = {}) =>
  new Prio3(PRIO3_SUMVEC_MULTIPROOF_ID, new circuits.SumVec(field, length, maxMeasurement, chunkLength),
    { shares, proofs, name: "Prio3SumVecWithMultiproof" });

export const prio3MultihotCountVec = (length, maxWeight, chunkLength, { shares = 2 } = {}) =>
  new Prio3(PRIO3_MULTIHOT_COUNTVEC_ID,
    new circuits.MultihotCountVec(Field128, length, maxWeight, chunkLength),
    { shares, name: "Prio3MultihotCountVec" });
