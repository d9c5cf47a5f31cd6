// A location question's checks and randomizer (geo_exp) over location.js's channel, loaded
// only for a survey with a location question (optional.js).

import { N, t } from "./i18n.js";
import { ManifestMismatch, P, certifyRatio, checkEpsilon } from "./mechanisms.js";  // a cycle, safe
import { MAX_CELLS, MAX_SIDE, QUANTUM, geoChannel, spread } from "./location.js";

export function cellLabels(grid) {
  const labels = [];
  for (let r = 1; r <= grid.rows; r++) for (let c = 1; c <= grid.cols; c++) labels.push(`${r},${c}`);
  return labels;
}

export function checkLocation(question, where) {
  const grid = question.grid;
  if (grid === null || typeof grid !== "object" || !Number.isSafeInteger(grid.rows)
      || !Number.isSafeInteger(grid.cols) || grid.rows < 1 || grid.cols < 1
      || grid.rows > MAX_SIDE || grid.cols > MAX_SIDE || grid.rows * grid.cols < 2
      || grid.rows * grid.cols > MAX_CELLS || typeof grid.cell_km !== "number"
      || !(grid.cell_km > 0) || !Number.isFinite(grid.cell_km)) {
    throw new ManifestMismatch(`${where}: grid must be {rows, cols, cell_km} with 2 to ${MAX_CELLS} cells`);
  }
  checkEpsilon(question.epsilon_geo, `${where}: epsilon_geo`);
  const known = new Set(cellLabels(grid));
  const regions = question.regions ?? {};
  if (typeof regions !== "object" || Array.isArray(regions)) throw new ManifestMismatch(`${where}: bad regions`);
  for (const [name, members] of Object.entries(regions)) {
    if (!Array.isArray(members) || !members.length || new Set(members).size !== members.length
        || members.some((m) => !known.has(m))) {
      throw new ManifestMismatch(`${where}: region ${JSON.stringify(name)} must list distinct cells`);
    }
  }
  const bg = question.background;
  if (bg != null && (typeof bg !== "string"
      || !/^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/=]+$/.test(bg))) {
    throw new ManifestMismatch(`${where}: the background must be a data: URL of a PNG, JPEG or WebP image`);
  }
}

export function geoCore(epsilon, question) {
  const { rows, cols, cell_km: cellKm } = question.grid;
  let channel;
  try {
    channel = geoChannel(rows, cols, cellKm, question.epsilon_geo);
  } catch (err) {
    throw new ManifestMismatch(`geo_exp: ${err.message}`);
  }
  certifyRatio("geo_exp", channel.ratio, epsilon);
  return {
    name: "geo_exp", k: rows * cols, channel,
    params: { base: channel.base.toString(), quantum: QUANTUM },
    perturbIndex(index, source) {
      const w = channel.rowWeights(index);
      let draw = source.randbelow(channel.totals[index]);
      for (let z = 0; z < w.length; z++) {
        if (draw < w[z]) return z;
        draw -= w[z];
      }
      throw new Error("unreachable: the draw is below the total weight");
    },
    describe(labels, index = 0) {
      const { radius, within, own } = spread(channel, index);
      return { text: t("loc.describe", { radius: N(radius.toPrecision(3)), p: P(within),
                                         own: P(own), geo: N(String(question.epsilon_geo)) }),
               radiusKm: radius, within, own };
    },
    explain(report, labels) {
      const [r, c] = labels[report].split(",");
      return t("loc.cell", { r, c });
    },
  };
}
