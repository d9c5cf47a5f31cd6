// The bytes Python signs for a survey (canonical_json(Survey.to_dict()), floats as repr()),
// re-derived to compare with the signed bytes; mechanisms.js canonicalJson is the integers-only
// one for parameters. docs/web.md, "What the page does" (2). Each question type's own keys come
// from its unit (js/types/).

import { loaded } from "./optional.js";
import { unitOf } from "./types/index.js";

/** A number Python holds as a float (written "1.0", not "1"). */
export class PyFloat {
  constructor(value) {
    this.value = value;
  }
}

/** Python's repr() of a float: shortest round-trip digits in repr's layout. */
export function pyFloat(x) {
  if (!Number.isFinite(x)) throw new TypeError("NaN and infinities are not JSON");
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exponent] = Math.abs(x).toExponential().split("e");
  const exp = Number(exponent);
  const digits = mantissa.replace(".", "");
  const sign = x < 0 ? "-" : "";
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp >= 0) {
    return `${sign}${digits.slice(0, exp + 1).padEnd(exp + 1, "0")}.` +
      `${digits.slice(exp + 1) || "0"}`;
  }
  return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
}

function byCodePoint(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

function pyString(s) {
  if (!s.isWellFormed()) throw new TypeError("a string holds a lone surrogate");
  return JSON.stringify(s); // the same escapes as Python's ensure_ascii=False
}

/** canonical_json of a value; numbers are integers unless wrapped in PyFloat. */
export function pythonJson(value) {
  if (value instanceof PyFloat) return pyFloat(value.value);
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "string") return pyString(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError("an integer was expected");
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(",")}]`;
  if (typeof value === "object") {
    return `{${Object.keys(value).sort(byCodePoint)
      .map((k) => `${pyString(k)}:${pythonJson(value[k])}`).join(",")}}`;
  }
  throw new TypeError(`not JSON: ${typeof value}`);
}

export const isFloat = (x) => typeof x === "number" && Number.isFinite(x);

function question(q) {
  if (q.disclosed === true) return disclosedQuestion(q);
  if (!isFloat(q.epsilon)) throw new TypeError("epsilon must be a number");
  const d = { id: q.id, text: q.text, type: q.type, epsilon: new PyFloat(q.epsilon),
              mechanism: q.mechanism, optional: q.optional ?? false, params: q.params ?? {} };
  if (q.mechanism_choice != null) d.mechanism_choice = q.mechanism_choice;
  if (q.instantaneous_epsilon != null) {
    if (!isFloat(q.instantaneous_epsilon)) throw new TypeError("bad instantaneous_epsilon");
    d.instantaneous_epsilon = new PyFloat(q.instantaneous_epsilon);
  }
  for (const key of ["central_epsilon", "local_epsilon"]) {  // two-server surveys
    if (q[key] == null) continue;
    if (!isFloat(q[key])) throw new TypeError(`bad ${key}`);
    d[key] = new PyFloat(q[key]);
  }
  Object.assign(d, unitOf(q).canonical(q, false));  // the type's own keys
  if (q.special != null) d.special = q.special;
  if (q.relevant != null) d.relevant = q.relevant;  // skip logic: absent without it
  if (q.hint != null) d.hint = q.hint;  // shared/translations.py: absent without a hint
  return d;
}

/** A disclosed question (sent as given): no epsilon, mechanism or params. */
function disclosedQuestion(q) {
  const d = { id: q.id, text: q.text, type: q.type, optional: q.optional ?? false,
              disclosed: true };
  if (q.carried === true) d.carried = true;  // its value comes from the invitation
  Object.assign(d, unitOf(q).canonical(q, true));
  if (q.relevant != null) d.relevant = q.relevant;
  if (q.hint != null) d.hint = q.hint;
  return d;
}

/** CrosstabSpec.to_dict(): rows, cols and the bins that were given (integer lists). */
function crosstab(c) {
  if (!c || typeof c !== "object" || Array.isArray(c) || typeof c.rows !== "string" ||
      typeof c.cols !== "string") {
    throw new TypeError("a crosstab names its rows and cols");
  }
  const d = { rows: c.rows, cols: c.cols };
  for (const key of ["row_bins", "col_bins"]) {
    if (c[key] == null) continue;
    if (!Array.isArray(c[key]) || !c[key].every(Number.isSafeInteger)) {
      throw new TypeError("crosstab bins are integers");
    }
    d[key] = c[key];
  }
  return d;
}

/** Survey.to_dict() of a parsed survey, written as canonical_json. */
export function canonicalSurveyText(survey) {
  const d = { id: survey.id, title: survey.title, version: survey.version,
              description: survey.description ?? "", questions: survey.questions.map(question) };
  if (survey.series != null) d.series = survey.series;
  if (survey.report_size_limit != null) d.report_size_limit = survey.report_size_limit;
  // Declared crosstabs (docs/crosstabs.md): absent when none, as Python writes them.
  if (Array.isArray(survey.crosstabs) && survey.crosstabs.length) {
    d.crosstabs = survey.crosstabs.map(crosstab);
  }
  if (survey.collection != null || survey.two_server != null) {  // absent in the LDP mode
    d.collection = survey.collection;
    d.two_server = twoServer(survey.two_server);
  }
  // Several languages (contract 4, shared/translations.py): absent when not given.
  if (survey.language != null) d.language = survey.language;
  if (survey.translations != null) {  // survey_text.js, loaded for a survey with translations
    d.translations = loaded("surveyText").canonicalTranslations(survey.translations);
  }
  return pythonJson(d);
}

/** TwoServerConfig.to_dict() (shared/two_server/config.py): delta is a float. */
function twoServer(t) {
  if (!t || typeof t !== "object" || Array.isArray(t) || !isFloat(t.delta)) {
    throw new TypeError("a two-server survey has a two_server table");
  }
  const d = { helper_url: t.helper_url, helper_hpke_key: t.helper_hpke_key,
              leader_hpke_key: t.leader_hpke_key, min_batch_size: t.min_batch_size,
              delta: new PyFloat(t.delta) };
  if (t.leader_url != null) d.leader_url = t.leader_url;
  return d;
}
