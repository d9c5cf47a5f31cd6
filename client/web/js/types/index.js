// The page's question types (shared/question_types/'s twin): one module per type in this
// folder. The page asks a question's unit, `unitOf(q)`, and never compares the type's name.
// optional.js imports a type's module only for a survey that has one and registers it here.
// Adding a type: its module, its entry here and in optional.js TYPE_IMPORTS (docs/web.md).

/** Each type, and what its unit needs (optional.js names): the modules it imports, loaded
 * alongside it rather than one round trip after; the parts of the words it speaks; the modules
 * it measures with in the two-server mode. */
const TYPES = Object.freeze({
  binary: {},
  categorical: {},
  integer: { modules: ["geometric"] },
  ordinal: {},
  location: { modules: ["location", "geoExp", "gridPicker"], words: ["location"] },
  multiselect: { modules: ["multiselect"], words: ["multiselect"], twoServer: ["twoServerSets"] },
  decimal: { modules: ["decimalNumber"], words: ["decimal"], twoServer: ["twoServerGrid"] },
});

/** The type names a survey may use (QUESTION_TYPES in Python). */
export const TYPE_NAMES = Object.freeze(Object.keys(TYPES));

/** Whether `name` is a question type the page knows. */
export const isTypeName = (name) => typeof name === "string" && Object.hasOwn(TYPES, name);

const units = new Map();

/** The known types of a survey's questions. */
export function typesOf(survey) {
  return [...new Set(survey.questions.filter((q) => q && isTypeName(q.type)).map((q) => q.type))];
}

/** The modules the given types' units import. */
export const modulesOf = (names) => names.flatMap((name) => TYPES[name].modules ?? []);

/** The catalogue parts the given types speak with. */
export const wordsOf = (names) => names.flatMap((name) => TYPES[name].words ?? []);

/** The modules the given types measure with in the two-server mode. */
export const twoServerModulesOf = (names) => names.flatMap((name) => TYPES[name].twoServer ?? []);

/** Whether the unit of type `name` is registered (its module loaded). */
export const hasUnit = (name) => units.has(name);

/** Register a type's unit (optional.js, once its module is loaded). */
export function register(unit) {
  if (!isTypeName(unit.name)) throw new Error(`${unit.name} is not a question type`);
  units.set(unit.name, unit);
}

/** The unit of question `q`'s type; throws (a bug in the page) when it is not loaded. */
export function unitOf(q) {
  const unit = units.get(q.type);
  if (!unit) throw new Error(`the ${q.type} question type is not loaded (optional.js loadFor)`);
  return unit;
}
