// How values cross between the test worker and the client's host process. Towards the host
// (trusted → untrusted) arguments travel as V8 structured clones, so a test can hand the
// client exactly what it means to (undefined, cycles, BigInt, a Map) and see it refused.
// Back from the host everything is untrusted: plain JSON only, size-capped, and an error is
// rebuilt field by field from what the contract names (never by deserializing objects).

import { deserialize, serialize } from "node:v8";

/** Largest line the worker accepts from its host, in bytes. */
export const MAX_HOST_LINE_BYTES = 8 * 1024 * 1024;
/** Longest string field of an error kept from the host (stderr, message, stack). */
const MAX_TEXT = 256 * 1024;

export type Encoded = { u: 1 } | { j: string } | { bad: string };

/** Trusted → host: a structured clone, base64 (functions cannot be sent: they become a marker). */
export function packArgs(args: unknown[]): string {
  try {
    return serialize(args).toString("base64");
  } catch {
    return serialize(args.map((a) => (typeof a === "function" ? "[function]" : a))).toString("base64");
  }
}

export function unpackArgs(text: string): unknown[] {
  return deserialize(Buffer.from(text, "base64")) as unknown[];
}

/** Host → worker: a value as JSON (undefined kept apart; anything unserializable marked). */
export function encodeValue(value: unknown): Encoded {
  if (value === undefined) return { u: 1 };
  try {
    const j = JSON.stringify(value);
    return j === undefined ? { bad: typeof value } : { j };
  } catch (error) {
    return { bad: String((error as Error)?.message ?? error).slice(0, 200) };
  }
}

export function decodeValue(encoded: Encoded | undefined): unknown {
  if (!encoded || typeof encoded !== "object") return { "[unreadable]": true };
  if ("u" in encoded) return undefined;
  if ("j" in encoded && typeof encoded.j === "string") return JSON.parse(encoded.j);
  return { "[unserializable]": String((encoded as { bad?: unknown }).bad ?? "?") };
}

export interface EncodedError {
  mcp: boolean;
  name?: string;
  message?: string;
  stack?: string;
  code?: unknown;
  remoteCode?: unknown;
  data?: Encoded;
  exitCode?: unknown;
  signal?: unknown;
  stderr?: unknown;
  cause?: { name?: string; message?: string; code?: unknown };
}

const text = (v: unknown) => (typeof v === "string" ? v.slice(0, MAX_TEXT) : undefined);
const scalar = (v: unknown) => (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean" ? v : undefined);

/** Host side: what the contract says an McpError carries, and no more. */
export function encodeError(error: unknown, isMcp: (e: unknown) => boolean): EncodedError {
  const e = (error ?? {}) as Record<string, unknown>;
  const read = (key: string) => {
    try {
      return e[key];
    } catch {
      return undefined;
    }
  };
  const cause = read("cause") as Record<string, unknown> | undefined;
  const out: EncodedError = { mcp: safe(() => isMcp(error), false), name: text(read("name")), message: typeof error === "object" && error !== null ? text(read("message")) : String(error).slice(0, MAX_TEXT), stack: text(read("stack")) };
  for (const key of ["code", "remoteCode", "exitCode", "signal"] as const) if (key in e) out[key] = scalar(read(key));
  if ("stderr" in e) out.stderr = typeof read("stderr") === "string" ? text(read("stderr")) : scalar(read("stderr"));
  if ("data" in e) out.data = encodeValue(read("data"));
  if (cause && typeof cause === "object") out.cause = { name: text(safe(() => cause.name, undefined)), message: text(safe(() => cause.message, undefined)), code: scalar(safe(() => cause.code, undefined)) };
  return out;
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** Worker side: the fields of an error as the host reported them (strings and scalars only). */
export function errorFields(encoded: EncodedError): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of ["code", "remoteCode", "exitCode", "signal", "stderr"] as const) if (key in encoded) fields[key] = scalar(encoded[key]);
  if (encoded.data !== undefined) fields.data = decodeValue(encoded.data);
  if (encoded.cause) fields.cause = Object.assign(new Error(String(encoded.cause.message ?? "")), { name: String(encoded.cause.name ?? "Error"), code: scalar(encoded.cause.code) });
  return fields;
}
