// Skip-logic conditions (`relevant`), the twin of shared/conditions.py token for token (the
// same errors, positions and messages; tests/web/condition_vectors.py): parseCondition(text,
// questions, index).evaluate(answers). Never eval. docs/skip-logic.md, "Writing conditions".
// What a condition may read of a question is its type's unit's (js/types/): `conditionKind`.

import { isTypeName, unitOf } from "./types/index.js";

export const MAX_DEPTH = 32;
const MAX_INTEGER = 2n ** 53n - 1n;
const WHITESPACE = " \t\n\r";
const WORD = new Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");
const KEYWORDS = new Set(["and", "or", "not", "in", "true", "false"]);
const FUNCTIONS = ["selected", "count_selected", "answered"];
const ORDERING = ["<", "<=", ">", ">="];
const SET = "set";  // the kind of a multiselect answer: read with selected() or count_selected()

export class ConditionError extends Error {
  constructor(kind, position, message) {
    super(message);
    this.name = "ConditionError";
    this.kind = kind;
    this.position = position;
  }
}

const describe = (token) => (token.kind === "end" ? "the end of the condition" : `"${token.text}"`);

/** The tokens of a condition (code points), ending with an "end" token. */
export function tokenize(text) {
  const chars = Array.from(text);
  const tokens = [];
  const n = chars.length;
  let i = 0;
  while (i < n) {
    const c = chars[i];
    if (WHITESPACE.includes(c)) { i += 1; continue; }
    if ("()[],".includes(c)) { tokens.push({ kind: "punct", text: c, value: c, position: i }); i += 1; continue; }
    if ("=!<>".includes(c)) {
      const two = chars.slice(i, i + 2).join("");
      if (["==", "!=", "<=", ">="].includes(two)) {
        tokens.push({ kind: "op", text: two, value: two, position: i });
        i += 2;
        continue;
      }
      if (c === "<" || c === ">") { tokens.push({ kind: "op", text: c, value: c, position: i }); i += 1; continue; }
      if (c === "=") throw new ConditionError("syntax", i, 'use "==" to compare, not "="');
      throw new ConditionError("syntax", i, 'unexpected "!" (write "!=" or "not")');
    }
    if (c === "'" || c === '"') {
      const end = chars.indexOf(c, i + 1);
      if (end < 0) throw new ConditionError("syntax", i, "this text in quotes has no closing quote");
      tokens.push({ kind: "str", text: chars.slice(i, end + 1).join(""),
                    value: chars.slice(i + 1, end).join(""), position: i });
      i = end + 1;
      continue;
    }
    if (WORD.has(c)) {
      let j = i;
      while (j < n && WORD.has(chars[j])) j += 1;
      tokens.push(wordToken(chars.slice(i, j).join(""), i));
      i = j;
      continue;
    }
    throw new ConditionError("syntax", i, `unexpected character "${c}"`);
  }
  tokens.push({ kind: "end", text: "", value: null, position: n });
  return tokens;
}

function wordToken(word, position) {
  const digits = word.startsWith("-") ? word.slice(1) : word;
  if (digits && /^[0-9]+$/.test(digits)) {
    const big = BigInt(word);
    if ((big < 0n ? -big : big) > MAX_INTEGER) {
      throw new ConditionError("syntax", position, "this number is too large (at most 9007199254740991 either way)");
    }
    return { kind: "int", text: word, value: Number(big), position };
  }
  if (word.startsWith("-")) throw new ConditionError("syntax", position, 'a "-" must start a whole number');
  if (KEYWORDS.has(word)) return { kind: "kw", text: word, value: word, position };
  return { kind: "word", text: word, value: word, position };
}

const KIND_WORDS = { bool: "a yes/no value", int: "a number", text: "text" };
// An operand's kind of value in an error's words: an ordered one (a question whose unit's options
// are in order) is an ordinal answer.
const words = (operand) => (operand.ordered ? "an ordinal answer" : KIND_WORDS[operand.kind]);

function codeLength(s) { return Array.from(s).length; }

function literalOf(token) {
  const end = token.position + codeLength(token.text);
  if (token.kind === "int") return { form: "literal", kind: "int", start: token.position, end, literal: token.value };
  if (token.kind === "str") return { form: "literal", kind: "text", start: token.position, end, literal: token.value };
  if (token.kind === "kw" && (token.text === "true" || token.text === "false")) {
    return { form: "literal", kind: "bool", start: token.position, end, literal: token.text === "true" };
  }
  return null;
}

const textual = (operand) => operand.kind === "text";

// The option `value` differs from only by case, as a hint ("" when there is none).
function didYouMean(value, options) {
  const same = options.filter((o) => o.toLowerCase() === value.toLowerCase());
  return same.length ? `: did you mean "${same[0]}"?` : "";
}

// For a yes/no question compared with text (`paid_sex == 'yes'`): how to write it.
function yesNoHint(left, right) {
  for (const [a, b] of [[left, right], [right, left]]) {
    if (a.form === "ref" && a.kind === "bool" && a.question && b.form === "literal" &&
        b.kind === "text") {
      const qid = a.question.id;
      return `: "${qid}" is yes/no: write ${qid} (or ${qid} == true) or ${qid} == false`;
    }
  }
  return "";
}

function checkOption(questionSide, literal) {
  if (questionSide.form === "ref" && literal.form === "literal" && literal.kind === "text" &&
      !questionSide.question.options.includes(literal.literal)) {
    throw new ConditionError("type", literal.start,
      `"${literal.literal}" is not an option of "${questionSide.question.id}"` +
      didYouMean(literal.literal, questionSide.question.options));
  }
}

const sameOptions = (a, b) => a.length === b.length && a.every((o, i) => o === b[i]);

function checkCompare(op, left, right) {
  if (ORDERING.includes(op.text)) {
    if (left.kind === "int" && right.kind === "int") return;
    for (const [a, b] of [[left, right], [right, left]]) {
      if (a.ordered && b.form === "literal" && b.kind === "text") {
        checkOption(a, b);
        return;
      }
    }
    if (left.ordered && right.ordered && left.question && right.question &&
        sameOptions(left.question.options, right.question.options)) return;
    throw new ConditionError("type", op.position,
      `"${op.text}" orders numbers, or an ordinal question against one of its options`);
  }
  if (textual(left) && textual(right)) {
    checkOption(left, right);
    checkOption(right, left);
    return;
  }
  if (left.kind !== right.kind) {
    throw new ConditionError("type", op.position,
      `"${op.text}" compares ${words(left)} with ${words(right)}` +
      yesNoHint(left, right));
  }
}

function checkMember(left, value) {
  if (textual(left) && value.kind === "text") {
    checkOption(left, value);
    return;
  }
  if (left.kind !== value.kind) {
    throw new ConditionError("type", value.start,
      `"in" compares ${words(left)} with ${words(value)}`);
  }
}

/** What a condition reads of a question: its id, options, what kind of value its answer is
 * (null: none a condition can read), whether its options are in order and how an error names
 * it. */
function infoOf(q) {
  const unit = isTypeName(q.type) ? unitOf(q) : null;
  return { id: String(q.id), options: Array.isArray(q.options) ? q.options : [],
           kind: unit?.conditionKind ?? null, ordered: unit?.ordered ?? false,
           words: unit?.conditionWords };
}

class Parser {
  constructor(text, questions, at) {
    this.chars = Array.from(text);
    this.tokens = tokenize(text);
    this.i = 0;
    const infos = questions.map(infoOf);
    this.earlier = new Map(infos.slice(0, at).map((q) => [q.id, q]));
    this.own = at < infos.length ? infos[at].id : null;
    this.later = new Set(infos.slice(at + 1).map((q) => q.id));
    this.references = [];
  }

  peek(ahead = 0) { return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)]; }

  advance() { const t = this.peek(); this.i += 1; return t; }

  expect(text, message) {
    const token = this.peek();
    if (token.kind !== "punct" || token.text !== text) throw new ConditionError("syntax", token.position, message);
    return this.advance();
  }

  isKw(word, ahead = 0) { const t = this.peek(ahead); return t.kind === "kw" && t.text === word; }

  isPunct(text) { const t = this.peek(); return t.kind === "punct" && t.text === text; }

  condition() {
    const node = this.orExpr(0);
    const token = this.peek();
    if (token.kind !== "end") throw new ConditionError("syntax", token.position, `unexpected ${describe(token)}`);
    return node;
  }

  orExpr(depth) {
    const items = [this.andExpr(depth)];
    while (this.isKw("or")) { this.advance(); items.push(this.andExpr(depth)); }
    return items.length === 1 ? items[0] : { form: "or", items };
  }

  andExpr(depth) {
    const items = [this.notExpr(depth)];
    while (this.isKw("and")) { this.advance(); items.push(this.notExpr(depth)); }
    return items.length === 1 ? items[0] : { form: "and", items };
  }

  notExpr(depth) {
    if (depth > MAX_DEPTH) {
      throw new ConditionError("syntax", this.peek().position,
        `the condition is nested too deeply (at most ${MAX_DEPTH} levels of parentheses and not)`);
    }
    if (this.isKw("not")) { this.advance(); return { form: "not", items: [this.notExpr(depth + 1)] }; }
    return this.comparison(depth);
  }

  comparison(depth) {
    const left = this.operand(depth);
    const token = this.peek();
    if (token.kind === "op") {
      this.advance();
      const right = this.operand(depth);
      checkCompare(token, left, right);
      return { form: "compare", op: token.text, left, right };
    }
    const negated = this.isKw("not") && this.isKw("in", 1);
    if (negated || this.isKw("in")) {
      if (negated) this.advance();
      const keyword = this.advance();
      const values = this.values(keyword);
      for (const value of values) checkMember(left, value);
      return { form: "in", left, values, negated };
    }
    if (left.kind !== "bool") {
      throw new ConditionError("type", left.start,
        `"${this.chars.slice(left.start, left.end).join("")}" is not a yes/no condition: compare it with "==", "<" or "in"`);
    }
    return { form: "bare", left };
  }

  values(keyword) {
    this.expect("[", `expected a list in square brackets after "${keyword.text}"`);
    const values = [this.literal()];
    while (this.isPunct(",")) { this.advance(); values.push(this.literal()); }
    this.expect("]", 'expected "," or "]"');
    return values;
  }

  literal() {
    const token = this.peek();
    const found = literalOf(token);
    if (found === null) throw new ConditionError("syntax", token.position, "expected a value: a number, text in quotes, true or false");
    this.advance();
    return found;
  }

  operand(depth) {
    const token = this.peek();
    const found = literalOf(token);
    if (found !== null) { this.advance(); return found; }
    if (token.kind === "punct" && token.text === "(") {
      this.advance();
      const inner = this.orExpr(depth + 1);
      const close = this.expect(")", 'expected ")"');
      return { form: "group", kind: "bool", start: token.position, end: close.position + 1, inner };
    }
    if (token.kind === "word") {
      this.advance();
      if (this.isPunct("(")) return this.call(token);
      const question = this.resolve(token);
      if (question.kind === SET) {
        throw new ConditionError("type", token.position,
          `"${question.id}" is a multiselect question: read it with selected(${question.id}, "option") or count_selected(${question.id})`);
      }
      if (question.kind === null) {
        throw new ConditionError("type", token.position,
          `"${question.id}" is ${question.words ?? "a question"}, which a condition cannot read`);
      }
      return { form: "ref", kind: question.kind, ordered: question.ordered, start: token.position,
               end: token.position + codeLength(token.text), question };
    }
    throw new ConditionError("syntax", token.position, `expected a question id, a value or "(", not ${describe(token)}`);
  }

  call(name) {
    if (!FUNCTIONS.includes(name.text)) {
      throw new ConditionError("syntax", name.position, `unknown function "${name.text}" (the functions are selected, count_selected and answered)`);
    }
    this.advance();  // "("
    const target = this.peek();
    if (target.kind !== "word") throw new ConditionError("syntax", target.position, "expected a question id");
    this.advance();
    const question = this.resolve(target);
    if (name.text === "answered") {
      if (question.kind === null) {
        throw new ConditionError("type", target.position,
          `"${question.id}" is ${question.words ?? "a question"}, which a condition cannot read`);
      }
      const close = this.expect(")", 'expected ")"');
      return { form: "answered", kind: "bool", start: name.position, end: close.position + 1, question };
    }
    if (question.kind !== SET) {
      throw new ConditionError("type", target.position,
        `${name.text}() reads a multiselect question; "${question.id}" is ${question.words ?? "another question"}`);
    }
    let option = null;
    if (name.text === "selected") {
      this.expect(",", 'expected ","');
      const label = this.peek();
      if (label.kind !== "str") throw new ConditionError("syntax", label.position, "expected an option in quotes");
      this.advance();
      if (!question.options.includes(label.value)) {
        throw new ConditionError("type", label.position, `"${label.value}" is not an option of "${question.id}"` +
          didYouMean(label.value, question.options));
      }
      option = label.value;
    }
    const close = this.expect(")", 'expected ")"');
    const selected = name.text === "selected";
    return { form: selected ? "selected" : "count", kind: selected ? "bool" : "int",
             start: name.position, end: close.position + 1, question, option };
  }

  resolve(token) {
    const id = token.text;
    const found = this.earlier.get(id);
    if (found !== undefined) {
      if (!this.references.includes(id)) this.references.push(id);
      return found;
    }
    let message;
    if (id === this.own) message = `"${id}" is this question itself: a condition can only read earlier questions`;
    else if (this.later.has(id)) message = `"${id}" comes later in the survey: a condition can only read earlier questions`;
    else message = `there is no question "${id}" in this survey`;
    throw new ConditionError("reference", token.position, message);
  }
}

// --- evaluation -------------------------------------------------------------------------------

const MISSING = Symbol("missing");

function lookup(answers, id) {
  const value = answers instanceof Map ? answers.get(id) : (Object.hasOwn(answers, id) ? answers[id] : undefined);
  if (value === null || value === undefined) return undefined;
  return typeof value === "bigint" ? Number(value) : value;
}

function valueOf(operand, answers) {
  if (operand.form === "literal") return operand.literal;
  if (operand.form === "group") return evaluate(operand.inner, answers);
  const given = lookup(answers, operand.question.id);
  if (operand.form === "answered") return given !== undefined;
  if (operand.form === "count") return given === undefined ? 0 : given.length;
  if (given === undefined) return MISSING;
  if (operand.form === "selected") return given.includes(operand.option);
  return given;
}

// An ordinal value's place among its (or the other side's) options; null for a special value.
function place(operand, value, other) {
  const question = operand.ordered ? operand.question : other.question;
  const at = question.options.indexOf(value);
  return at < 0 ? null : at;
}

// A special value (don't know, ...) is in no order: only numbers and options' places are.
const orders = (value) => typeof value === "number";

// A bare yes/no operand's truth: a yes, not a special value's label ("Don't know" is an answer,
// not a yes: `used == true` is false for it too), nor a missing answer.
const isYes = (value) => value !== MISSING && typeof value !== "string" && Boolean(value);

function evaluate(node, answers) {
  switch (node.form) {
    case "or": return node.items.some((item) => evaluate(item, answers));
    case "and": return node.items.every((item) => evaluate(item, answers));
    case "not": return !evaluate(node.items[0], answers);
    default: break;
  }
  let left = valueOf(node.left, answers);
  if (node.form === "bare") return isYes(left);
  if (node.form === "in") {
    if (left === MISSING) return node.negated;
    return node.values.some((v) => v.literal === left) !== node.negated;
  }
  let right = valueOf(node.right, answers);
  if (left === MISSING || right === MISSING) return node.op === "!=";
  if (node.op === "==") return left === right;
  if (node.op === "!=") return left !== right;
  if (node.left.ordered || node.right.ordered) {
    [left, right] = [place(node.left, left, node.right), place(node.right, right, node.left)];
  }
  if (!orders(left) || !orders(right)) return false;
  switch (node.op) {
    case "<": return left < right;
    case "<=": return left <= right;
    case ">": return left > right;
    default: return left >= right;
  }
}

/** The condition of question number `at` of `questions` (canonical question objects). */
export function parseCondition(text, questions, at) {
  const parser = new Parser(text, questions, at);
  const tree = parser.condition();
  return Object.freeze({
    text, tree, references: Object.freeze([...parser.references]),
    evaluate(answers) { return evaluate(tree, answers); },
  });
}
