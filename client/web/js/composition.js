// The total ε of everything this browser answered, before and with the survey being reviewed:
// the plain sum of the ledger's charges (shared/composition.py at δ = 0), in the page's rounding.
// The advanced composition bound and its δ are an opt-in of the CLI (`--budget-rule advanced`,
// docs/composition.md); a respondent is shown the plain sum, which needs no δ.

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
