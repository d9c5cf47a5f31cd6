// The total ε of everything this browser answered, before and with the survey being reviewed:
// the plain sum of the ledger's charges (shared/composition.py at δ = 0), in the page's rounding.
// The advanced composition bound and its δ are an opt-in of the CLI (`--budget-rule advanced`,
// docs/composition.md); a respondent is shown the plain sum, which needs no δ.

import { el } from "./dom.js";
import { epsilonText } from "./odds.js";

/** {k, total} for these ε (zeros, e.g. reused series answers and disclosed answers, skipped). */
export function plainTotal(epsilons) {
  const eps = epsilons.filter((e) => e > 0);
  return { k: eps.length, total: eps.reduce((a, e) => a + e, 0) };
}

function beforeLine({ k, total }) {
  if (k === 0) return "Before this survey: no reports.";
  if (k === 1) return `Before this survey: 1 report, ε = ${epsilonText(total)}.`;
  return `Before this survey: ${k} reports, ε = ${epsilonText(total)} in total.`;
}

function withLine({ k, total }) {
  if (k === 0) return "With this survey: no reports.";
  if (k === 1) return `With this survey: 1 report, ε = ${epsilonText(total)}.`;
  return `With this survey: ${k} reports, ε = ${epsilonText(total)} in total.`;
}

/** The details block of the review: the totals before and with this survey. */
export function compositionDetails(before, now) {
  return el("details", { class: "technical composition" },
    el("summary", {}, "Everything this browser has answered, in total"),
    el("ul", {}, el("li", {}, beforeLine(plainTotal(before))),
       el("li", {}, withLine(plainTotal([...before, ...now])))),
    el("p", {}, "The ε of separate reports add up: all of them together reveal at most what " +
                "one report with their total ε would."));
}
