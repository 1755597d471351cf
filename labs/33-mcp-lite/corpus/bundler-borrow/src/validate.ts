// 给定文件（GIVEN）：与参考答案相同，不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: the same as the reference solution's; nothing to do here.
// Argument validation, in one place for every module of the client. Each check throws
// MCP_INVALID_ARGUMENT with one message shape, "<what> must be <rule>, got <value>", and
// the phase the bad value came in through: "configure" for constructor options, "request"
// for the input of one call.

import { McpError, type McpErrorPhase } from "./errors.ts";

// Throws the one invalid-argument error.
export function throwInvalid(message: string, phase: McpErrorPhase): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase });
}

// Throws "<what> must be <rule>, got <value>" unless `ok`.
export function check(ok: boolean, what: string, rule: string, value: unknown, phase: McpErrorPhase): asserts ok {
  if (!ok) throwInvalid(`${what} must be ${rule}, got ${describeValue(value)}`, phase);
}

export interface IntegerRange {
  /** Smallest allowed value: 0 or 1. */
  min: 0 | 1;
  /** Largest allowed value; default: no limit but the safe-integer range. */
  max?: number;
}

// An optional integer option: `fallback` when undefined, else checked against the range.
export function integerOption(name: string, value: unknown, fallback: number, range: IntegerRange, phase: McpErrorPhase): number {
  if (value === undefined) return fallback;
  const { min, max = Number.MAX_SAFE_INTEGER } = range;
  const ok = Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
  check(ok, name, integerRule(min, range.max), value, phase);
  return value as number;
}

function integerRule(min: 0 | 1, max: number | undefined): string {
  const kind = min === 1 ? "a positive integer" : "a non-negative integer";
  return max === undefined ? kind : `${kind} no larger than ${max}`;
}

// A short, safe rendering of a bad value for an error message; never the whole value.
export function describeValue(value: unknown): string {
  if (typeof value === "string") return value.length > 80 ? `${JSON.stringify(value.slice(0, 80))}…` : JSON.stringify(value);
  if (value === null || typeof value !== "object") return typeof value === "function" ? "a function" : String(value);
  return Array.isArray(value) ? "an array" : "an object";
}
