/**
 * A safe arithmetic evaluator: a tokenizer and a recursive-descent parser, so a model's (or a
 * person's) expression is computed without `eval` or `Function` ever seeing it.
 *
 * Grammar, loosest binding first:
 * ```text
 * expression = term (("+" | "-") term)*
 * term       = unary (("*" | "/" | "%") unary)*
 * unary      = ("-" | "+") unary | power
 * power      = primary ("^" unary)?            right-associative: 2^3^2 = 2^9, -2^2 = -4
 * primary    = number | constant | function "(" expression ("," expression)* ")" | "(" expression ")"
 * ```
 */

/** Raised for anything that is not a valid expression, or whose value is not a finite number. */
export class CalculatorError extends Error {
  constructor(
    message: string,
    /** Character offset of the problem in the expression, when there is one. */
    readonly position?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A value and the operations that produced it, innermost first (shown as tool progress). */
export interface Evaluation {
  value: number;
  steps: string[];
}

const functions: Record<string, { arity: [number, number]; apply: (...values: number[]) => number }> = {
  sqrt: { arity: [1, 1], apply: Math.sqrt },
  cbrt: { arity: [1, 1], apply: Math.cbrt },
  abs: { arity: [1, 1], apply: Math.abs },
  round: { arity: [1, 1], apply: Math.round },
  floor: { arity: [1, 1], apply: Math.floor },
  ceil: { arity: [1, 1], apply: Math.ceil },
  sin: { arity: [1, 1], apply: Math.sin },
  cos: { arity: [1, 1], apply: Math.cos },
  tan: { arity: [1, 1], apply: Math.tan },
  ln: { arity: [1, 1], apply: Math.log },
  log: { arity: [1, 1], apply: Math.log10 },
  log2: { arity: [1, 1], apply: Math.log2 },
  exp: { arity: [1, 1], apply: Math.exp },
  min: { arity: [1, 16], apply: Math.min },
  max: { arity: [1, 16], apply: Math.max },
  pow: { arity: [2, 2], apply: Math.pow },
};

const constants: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

/** The function and constant names the evaluator knows (the demo policy spots them in prose). */
export const calculatorNames: readonly string[] = [...Object.keys(functions), ...Object.keys(constants)];

/** Longer inputs are refused: an expression, not a document. */
const maxLength = 500;

type Token = { kind: "number"; value: number; position: number } | { kind: "name" | "symbol"; text: string; position: number };

/**
 * Evaluates an arithmetic expression.
 *
 * Contract: throws a `CalculatorError` naming the problem (and where) for anything else,
 * including division by zero and results that are not finite.
 * @example evaluate("2 * (3 + 4) ^ 2").value // 98
 */
export function evaluate(expression: string): Evaluation {
  if (expression.length > maxLength) throw new CalculatorError(`The expression is too long (over ${maxLength} characters).`);
  const tokens = tokenize(expression);
  if (tokens.length === 0) throw new CalculatorError("The expression is empty.");
  const steps: string[] = [];
  let index = 0;
  const peek = (): Token | undefined => tokens[index];
  const isSymbol = (token: Token | undefined, ...symbols: string[]): boolean =>
    token !== undefined && token.kind === "symbol" && symbols.includes(token.text);
  const expect = (symbol: string, context: string): void => {
    const token = peek();
    if (!isSymbol(token, symbol)) throw unexpected(token, `expected "${symbol}" ${context}`);
    index += 1;
  };
  const record = (text: string, value: number): number => {
    if (!Number.isFinite(value)) throw new CalculatorError(`${text} is not a finite number.`);
    steps.push(`${text} = ${format(value)}`);
    return value;
  };

  const parseExpression = (): number => {
    let value = parseTerm();
    while (isSymbol(peek(), "+", "-")) {
      const operator = (tokens[index++] as { text: string }).text;
      const right = parseTerm();
      value = record(`${format(value)} ${operator} ${format(right)}`, operator === "+" ? value + right : value - right);
    }
    return value;
  };
  const parseTerm = (): number => {
    let value = parseUnary();
    while (isSymbol(peek(), "*", "/", "%")) {
      const token = tokens[index++] as { text: string; position: number };
      const right = parseUnary();
      if (token.text !== "*" && right === 0) throw new CalculatorError("Division by zero.", token.position);
      const result = token.text === "*" ? value * right : token.text === "/" ? value / right : value % right;
      value = record(`${format(value)} ${token.text} ${format(right)}`, result);
    }
    return value;
  };
  const parseUnary = (): number => {
    if (isSymbol(peek(), "-", "+")) {
      const operator = (tokens[index++] as { text: string }).text;
      const value = parseUnary();
      return operator === "-" ? -value : value;
    }
    return parsePower();
  };
  const parsePower = (): number => {
    const base = parsePrimary();
    if (!isSymbol(peek(), "^")) return base;
    index += 1;
    const exponent = parseUnary();
    return record(`${format(base)} ^ ${format(exponent)}`, Math.pow(base, exponent));
  };
  const parsePrimary = (): number => {
    const token = peek();
    if (token === undefined) throw new CalculatorError("The expression ends too early: a number is missing at the end.", expression.length);
    index += 1;
    if (token.kind === "number") return token.value;
    if (token.kind === "symbol") {
      if (token.text !== "(") throw unexpected(token, "expected a number");
      const value = parseExpression();
      expect(")", "to close the parenthesis");
      return value;
    }
    const name = token.text.toLowerCase();
    // Own properties only: "constructor" or "__proto__" must not reach Object.prototype.
    const constant = Object.hasOwn(constants, name) ? constants[name] : undefined;
    if (constant !== undefined) return constant;
    const definition = Object.hasOwn(functions, name) ? functions[name] : undefined;
    if (definition === undefined) {
      throw new CalculatorError(`Unknown name "${token.text}" at ${token.position + 1}. Known: ${calculatorNames.join(", ")}.`, token.position);
    }
    expect("(", `after ${name}`);
    const values = [parseExpression()];
    while (isSymbol(peek(), ",")) {
      index += 1;
      values.push(parseExpression());
    }
    expect(")", `to close ${name}(`);
    const [least, most] = definition.arity;
    if (values.length < least || values.length > most) {
      throw new CalculatorError(`${name} takes ${least === most ? least : `${least} to ${most}`} argument(s), got ${values.length}.`, token.position);
    }
    if ((name === "sqrt" || name === "ln" || name.startsWith("log")) && (values[0] ?? 0) < 0) {
      throw new CalculatorError(`${name} of a negative number is not a real number.`, token.position);
    }
    return record(`${name}(${values.map(format).join(", ")})`, definition.apply(...values));
  };

  const value = parseExpression();
  if (index < tokens.length) throw unexpected(tokens[index], "expected an operator or the end");
  if (!Number.isFinite(value)) throw new CalculatorError("The result is not a finite number.");
  return { value, steps };
}

/** A number as people write it: no float noise (0.1 + 0.2 shows as 0.3), no exponent below 1e21. */
export function format(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number.parseFloat(value.toPrecision(12)));
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)|([a-z_][a-z0-9_]*)|(\*\*|[-+*/%^(),×÷]))/iy;
  let position = 0;
  while (position < expression.length) {
    pattern.lastIndex = position;
    const match = pattern.exec(expression);
    if (match === null) {
      if (expression.slice(position).trim() === "") break;
      const offset = position + (expression.slice(position).length - expression.slice(position).trimStart().length);
      throw new CalculatorError(`Unexpected character "${expression[offset]}" at ${offset + 1}.`, offset);
    }
    const start = match.index + match[0].length - (match[1] ?? match[2] ?? match[3] ?? "").length;
    if (match[1] !== undefined) tokens.push({ kind: "number", value: Number(match[1]), position: start });
    else if (match[2] !== undefined) tokens.push({ kind: "name", text: match[2], position: start });
    else if (match[3] !== undefined) tokens.push({ kind: "symbol", text: normalizeSymbol(match[3]), position: start });
    position = pattern.lastIndex;
  }
  return tokens;
}

function normalizeSymbol(symbol: string): string {
  if (symbol === "**") return "^";
  if (symbol === "×") return "*";
  if (symbol === "÷") return "/";
  return symbol;
}

function unexpected(token: Token | undefined, expectation: string): CalculatorError {
  if (token === undefined) return new CalculatorError(`The expression ends too early: ${expectation}.`);
  const text = token.kind === "number" ? format(token.value) : token.text;
  return new CalculatorError(`Unexpected "${text}" at ${token.position + 1}: ${expectation}.`, token.position);
}
