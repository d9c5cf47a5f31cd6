// The total ε of everything this browser answered, both ways (shared/composition.py): the
// plain sum (δ = 0) and the advanced composition bound (Dwork, Rothblum & Vadhan,
// heterogeneous form) √(2 ln(1/δ)·Σε²) + Σ ε·(e^ε − 1) at δ = 1e-6, the better one marked.

import { el } from "./dom.js";
import { g } from "./manifest.js";

export const DEFAULT_DELTA = 1e-6;

/** {k, basic, advanced, delta, best} for these ε (zeros, e.g. reused series answers, skipped). */
export function compose(epsilons, delta = DEFAULT_DELTA) {
  const eps = epsilons.filter((e) => e > 0);
  const basic = eps.reduce((a, e) => a + e, 0);
  const squares = eps.reduce((a, e) => a + e * e, 0);
  const drift = eps.reduce((a, e) => a + e * Math.expm1(e), 0);
  const advanced = eps.length ? Math.sqrt(2 * Math.log(1 / delta) * squares) + drift : 0;
  return { k: eps.length, basic, advanced, delta, best: advanced < basic ? "advanced" : "basic" };
}

/** The details block of the review: before and with this survey, both ways. */
export function compositionDetails(before, now) {
  const line = (what, c) => el("li", {},
    `${what}, ${c.k} report(s): plain sum ε = ${g(c.basic)}` +
    (c.best === "basic" ? " (the better bound)" : "") +
    `; advanced composition bound ε = ${g(c.advanced)} at δ = ${c.delta}` +
    (c.best === "advanced" ? " (the better bound)" : ""));
  return el("details", { class: "technical composition" },
    el("summary", {}, "Everything this browser has answered, in total"),
    el("ul", {}, line("Before this survey", compose(before)),
       line("With this survey", compose([...before, ...now]))),
    el("p", {}, "Both are valid bounds on what all your reports together reveal; the " +
                "advanced bound holds except with probability δ and is smaller only over " +
                "many reports with small ε."));
}
