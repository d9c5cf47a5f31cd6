// The two layers of a longitudinal question with an instantaneous ε (RAPPOR's permanent and
// instantaneous randomized response; shared/mechanisms/longitudinal.py), loaded only for a
// survey that has one (optional.js).

import { t } from "./i18n.js";
import { ONE, certifyRatio, maxRatio } from "./mechanisms.js";  // a cycle, safe

export function twoLayerCore(permanent, instantaneous, epsilon) {
  const k = permanent.k;
  const p = permanent.p.mul(instantaneous.p).add(permanent.q.mul(instantaneous.q).mul(k - 1));
  const q = permanent.p.mul(instantaneous.q).add(permanent.q.mul(instantaneous.p))
    .add(permanent.q.mul(instantaneous.q).mul(k - 2));
  if (!p.add(q.mul(k - 1)).eq(ONE)) certifyRatio("two_layer", null, epsilon);
  certifyRatio(`${permanent.name}+instantaneous`, maxRatio(p.div(q), q.div(p)), epsilon);
  return {
    name: `${permanent.name}+instantaneous`, k, p, q, permanent, instantaneous,
    params: { p: p.toString(), q: q.toString(), permanent: permanent.params,
      instantaneous: instantaneous.params },
    perturbIndex(index, source) {
      const value = permanent.perturbIndex(index, source);
      return instantaneous.perturbIndex(permanent.indexOf(value), source);
    },
    describe(labels) {
      const first = permanent.describe(labels).params;
      const second = instantaneous.describe(labels).params;
      return { text: t("mech.twoLayer", { ...first, p1: first.p, q1: first.q, p2: second.p,
                                          q2: second.q }),
               truthful: p.toNumber(), other: q.toNumber() };
    },
    explain(report, labels) { return instantaneous.explain(report, labels); },
  };
}
