// The modules only some surveys need, loaded with import() once the signed survey says so: a
// survey without location questions never loads the location channel or the grid picker, and
// one collected by a single server never loads the two-server flow, Prio3 or HPKE; one without
// skip logic never loads the conditions' parser; one in a single language never loads the
// translations' accessor (survey_text.js). The page weighs less for everyone else
// (issue 32; tests/web/test_page_weight.py).
//
// manifest.js loads them (loadFor) after the signature and shape checks and before any
// mechanism is built; the synchronous code that uses them (mechanisms.js, form.js, page.js)
// takes them from `loaded`. A test or bench that builds a location mechanism without verifying a
// survey first calls loadFor or loadAll itself (tests/web/conftest.py js_page does).

const IMPORTS = Object.freeze({
  location: () => import("./location.js"),
  gridPicker: () => import("./grid_picker.js"),
  twoServerVerify: () => import("./twoserver/verify.js"),
  twoServer: () => import("./twoserver/flow.js"),
  multiselect: () => import("./multiselect.js"),
  conditions: () => import("./conditions.js"),
  surveyText: () => import("./survey_text.js"),  // several languages (docs/languages.md)
});

const modules = {};

/** The optional modules a survey (its questions checked for shape) needs, by name. */
export function needed(survey) {
  const names = [];
  if (survey.questions.some((q) => q && q.type === "location")) names.push("location", "gridPicker");
  if (survey.questions.some((q) => q && q.type === "multiselect")) names.push("multiselect");
  if (survey.questions.some((q) => q && q.relevant !== undefined)) names.push("conditions");
  if (survey.translations !== undefined) names.push("surveyText");
  if (survey.collection !== undefined || survey.two_server !== undefined) {
    names.push("twoServerVerify", "twoServer");
  }
  return names;
}

/** Load what `survey` needs, each module once. */
export async function loadFor(survey) {
  await Promise.all(needed(survey).map(async (name) => {
    modules[name] ??= await IMPORTS[name]();
  }));
}

/** Load every optional module (tests and benches that build mechanisms without a survey). */
export async function loadAll() {
  await Promise.all(Object.keys(IMPORTS).map(async (name) => {
    modules[name] ??= await IMPORTS[name]();
  }));
}

/** A loaded optional module; throws (a bug in the page, not the survey's fault) if it is not. */
export function loaded(name) {
  const module = modules[name];
  if (!module) throw new Error(`the ${name} module is not loaded (optional.js loadFor)`);
  return module;
}
