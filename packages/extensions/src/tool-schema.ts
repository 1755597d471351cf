// The limits an untrusted inputSchema must meet before the tool adapter keeps it: an
// object schema, capped in bytes and depth, no regular expression likely to backtrack for a
// very long time, and valid enough for a real JSON Schema validator (ajv) to compile.

import { Ajv, type ValidateFunction } from "ajv";
import { isPlainObject } from "../../../labs/33-mcp-lite/solution/src/protocol.ts";

/** Longest regular expression a schema's `pattern` or `patternProperties` may hold. */
export const MAX_PATTERN_LENGTH = 256;

/** The adapter's caps on one schema (ToolAdapterOptions' maxSchemaBytes and maxSchemaDepth). */
export interface SchemaLimits {
  maxSchemaBytes: number;
  maxSchemaDepth: number;
}

// The schema's own limits; returns a private copy, or why it is refused.
export function checkSchema(inputSchema: unknown, limits: SchemaLimits): Record<string, unknown> | string {
  if (!isPlainObject(inputSchema)) return "inputSchema must be an object";
  if (inputSchema.type !== "object") return 'inputSchema must have type "object"';
  let schemaJson: string;
  try {
    schemaJson = JSON.stringify(inputSchema);
  } catch {
    return "inputSchema is not serializable";
  }
  const schemaBytes = Buffer.byteLength(schemaJson);
  if (schemaBytes > limits.maxSchemaBytes) return `inputSchema is ${schemaBytes} bytes, over maxSchemaBytes (${limits.maxSchemaBytes})`;
  const depth = jsonDepth(inputSchema, limits.maxSchemaDepth);
  if (depth > limits.maxSchemaDepth) return `inputSchema nests deeper than maxSchemaDepth (${limits.maxSchemaDepth})`;
  const risky = riskyPattern(inputSchema);
  if (risky) return `inputSchema has a regular expression that could run for a very long time: ${risky}`;
  // A private copy: the server's object is never kept, so nothing can change it later.
  return JSON.parse(schemaJson) as Record<string, unknown>;
}

/** Compiled schemas kept (by their JSON), the least recently used dropped first. */
const COMPILED_KEPT = 256;
const compiled = new Map<string, ValidateFunction | string>();

// Compiles a schema with its own validator, or says why it cannot be. A schema seen before
// (the same JSON) gets the validator it got then: compiling costs tens to hundreds of ms of
// blocked event loop per schema, and a manager lists its servers' tools on every tools() and
// select(). A validator is a function of its schema alone (no formats, no shared instance).
export function compileSchema(schema: Record<string, unknown>): ValidateFunction | string {
  let key: string;
  try {
    key = JSON.stringify(schema);
  } catch {
    return "inputSchema is not serializable";
  }
  const kept = compiled.get(key);
  if (kept !== undefined) {
    compiled.delete(key);
    compiled.set(key, kept);
    return kept;
  }
  const made = compileFresh(schema);
  compiled.set(key, made);
  if (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
  return made;
}

function compileFresh(schema: Record<string, unknown>): ValidateFunction | string {
  // One validator per tool: a schema's $id registers it, so a shared instance would let
  // one tool's schema collide with, or be $ref'd by, another's.
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    // Stryker disable next-line BooleanLiteral: without ajv-formats ajv knows no format, and with strict off it ignores an unknown one either way
    validateFormats: false,
    logger: false,
  });
  try {
    if (!ajv.validateSchema(schema)) return `inputSchema is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
    return ajv.compile(schema);
  } catch (error) {
    return `inputSchema does not compile: ${(error as Error).message.slice(0, 200)}`;
  }
}

/** Deepest nesting of objects and arrays in a JSON value (a scalar is 0). */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    const level = depth + 1;
    deepest = Math.max(deepest, level);
    if (deepest > limit) return deepest; // enough to refuse; no need to walk the rest
    for (const child of Object.values(node)) stack.push([child, level]);
  }
  return deepest;
}

// Regular expressions in an untrusted schema run in this process (ajv compiles them to
// RegExp), and a pattern like (a+)+$ can take exponential time on a crafted argument. Node
// has no regex timeout, so refuse what is likely to backtrack badly: over-long patterns,
// a quantified group that itself holds a quantifier (nested quantifiers), and back-references.
// A heuristic: it refuses some harmless patterns and cannot prove a pattern safe.
export function riskyPattern(schema: unknown): string | undefined {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    const record = node as Record<string, unknown>;
    // Stryker disable next-line ArrayDeclaration: an extra plain-text pattern ("Stryker was here") is never risky
    const patterns: unknown[] = [];
    if (typeof record.pattern === "string") patterns.push(record.pattern);
    if (isPlainObject(record.patternProperties)) patterns.push(...Object.keys(record.patternProperties));
    for (const pattern of patterns as string[]) {
      const shown = JSON.stringify(pattern.slice(0, 40));
      if (pattern.length > MAX_PATTERN_LENGTH) return `${shown}… is longer than ${MAX_PATTERN_LENGTH} characters`;
      if (NESTED_QUANTIFIER.test(pattern)) return `${shown} nests quantifiers`;
      if (BACK_REFERENCE.test(pattern)) return `${shown} uses a back-reference`;
    }
    for (const child of Object.values(record)) stack.push(child);
  }
  return undefined;
}

// A group containing + * or {n,} that is itself followed by + * or {n,}: (a+)+, (\w*)*, (x{2,}){3,}
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*(?:[+*]|\{\d+,\d*\})(?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,\d*\})/;
const BACK_REFERENCE = /\\[1-9]|\\k</;
