// A location question (shared/question_types/location.py): a cell of the designer's grid,
// randomized by geo_exp. Its channel is in ../location.js and ../geo_exp.js, its picker in
// ../grid_picker.js; this unit is what the page asks of it.

import { PyFloat, isFloat } from "../canonical.js";
import { rawAnswer } from "../form.js";
import { cellLabels, checkLocation, geoCore } from "../geo_exp.js";
import { cellText, gridInputs, readCell } from "../grid_picker.js";
import { QuestionType } from "./base.js";

class LocationType extends QuestionType {
  // --- the signed definition (manifest.js, canonical.js, mechanisms.js) ---

  shapeRefusal(q) {
    return q.grid && typeof q.grid === "object" && Number.isSafeInteger(q.grid.rows) &&
      Number.isSafeInteger(q.grid.cols) ? null : "refusal.noGrid";
  }

  check(q, where) {
    checkLocation(q, where);
  }

  /** shared/location_question.py LocationGrid.to_dict (none for a disclosed question). */
  canonical(q, disclosed) {
    if (disclosed) return {};
    const grid = q.grid ?? {};
    if (!isFloat(q.epsilon_geo) || !isFloat(grid.cell_km)) {
      throw new TypeError("a location question has epsilon_geo and a grid's cell_km");
    }
    const d = { epsilon_geo: new PyFloat(q.epsilon_geo),
                grid: { rows: grid.rows, cols: grid.cols, cell_km: new PyFloat(grid.cell_km) },
                regions: q.regions ?? {} };
    if (q.background != null) d.background = q.background;
    return d;
  }

  // --- the mechanism (mechanisms.js) ---

  /** The cells' "row,col" labels, row by row. */
  values(q) { return cellLabels(q.grid); }

  /** No "not asked" value: a location question cannot depend on randomized answers. */
  labels(q) { return this.values(q); }

  core(name, epsilon, q, notAsked = false) {
    return name === "geo_exp" ? geoCore(epsilon, q) : super.core(name, epsilon, q, notAsked);
  }

  /** With an answer: the spread around that cell (else around a corner's). */
  describe(core, labels, answer, encode) {
    return answer !== undefined ? core.describe(labels, encode(answer)) : core.describe(labels);
  }

  // --- the form (form.js) ---

  inputs(q, name, describedBy) { return gridInputs(q, name, describedBy); }

  read(form, q, name) {
    const { raw, ...done } = rawAnswer(form, q, name);
    return raw === undefined ? done : readCell(q, raw);
  }

  answerText(q, value) { return cellText(q, value); }
}

export default new LocationType({
  name: "location",
  takesSpecial: false,
  mechanisms: ["geo_exp"],
  conditionWords: "a location question",  // not words: a condition error
});
