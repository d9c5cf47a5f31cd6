// The total ε this browser answered, before and with this survey: the plain sum of the ledger's
// charges (no δ for a respondent). docs/composition.md.

import { el } from "./dom.js";
import { N, t } from "./i18n.js";
import { epsilonText } from "./odds.js";

/** {k, total} for these ε (zeros, e.g. reused series answers and disclosed answers, skipped). */
export function plainTotal(epsilons) {
  const eps = epsilons.filter((e) => e > 0);
  return { k: eps.length, total: eps.reduce((a, e) => a + e, 0) };
}

/** The details block of the review: the totals before and with this survey. */
export function compositionDetails(before, now) {
  const line = (key, { k, total }) => el("li", {}, t(key, { k, epsilon: N(epsilonText(total)) }));
  return el("details", { class: "technical composition" },
    el("summary", {}, t("comp.summary")),
    el("ul", {}, line("comp.before", plainTotal(before)),
       line("comp.with", plainTotal([...before, ...now]))),
    el("p", {}, t("comp.adds")));
}
