// 给定文件（GIVEN）：与参考答案相同，不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: the same as the reference solution's; nothing to do here.
// The one error type the client rejects with: a stable code from a closed union plus
// the context a person needs to tell *why* (method, id, deadline, exit status, stderr).

export type McpErrorCode =
  | "MCP_INVALID_ARGUMENT" // bad constructor options or call input; raised before any spawn or write
  | "MCP_SPAWN_FAILED" // executable missing / not executable; `cause` is the spawn error
  | "MCP_NOT_INITIALIZED" // listTools/callTool before initialize() succeeded (or after the server died)
  | "MCP_PROTOCOL_ERROR" // unparsable or invalid line, oversized line, unsupported protocol version
  | "MCP_ERROR" // the server answered with a JSON-RPC error object
  | "MCP_TIMEOUT"
  | "MCP_ABORTED"
  | "MCP_BUSY" // maxPending requests already in flight
  | "MCP_PROCESS_EXIT" // the server process exited while requests were pending
  | "CLIENT_CLOSED"; // close() was called

/** Where in the client's life the failure happened ("configure": a constructor's options). */
export type McpErrorPhase = "configure" | "spawn" | "handshake" | "request" | "transport" | "close";

/**
 * What a failed request may have done on the server: "not-sent" when its line never left
 * the client, "unknown" when the server received it and may have executed it (a caller
 * must not assume a side effect did not happen, nor replay it blindly).
 */
export type McpRequestOutcome = "not-sent" | "unknown";

export interface McpErrorDetails {
  cause?: unknown;
  method?: string;
  requestId?: number;
  phase?: McpErrorPhase;
  timeoutMs?: number;
  remoteCode?: number;
  data?: unknown;
  exitCode?: number | null;
  signal?: string | null;
  stderr?: string;
  /** The stderr tail dropped earlier bytes. */
  stderrTruncated?: boolean;
  outcome?: McpRequestOutcome;
}

/** Largest serialized size of a remote error's `data` kept on the error object. */
export const MAX_ERROR_DATA_BYTES = 4 * 1024;

export class McpError extends Error {
  readonly code: McpErrorCode;
  // `declare`: no field initializers, so only the details that were given become own
  // (enumerable) properties.
  declare readonly method?: string;
  declare readonly requestId?: number;
  declare readonly phase?: McpErrorPhase;
  declare readonly timeoutMs?: number;
  declare readonly remoteCode?: number;
  declare readonly data?: unknown;
  declare readonly exitCode?: number | null;
  declare readonly signal?: string | null;
  declare readonly stderr?: string;
  declare readonly stderrTruncated?: boolean;
  declare readonly outcome?: McpRequestOutcome;

  constructor(code: McpErrorCode, message: string, details: McpErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    // Only own properties that carry information, so toMatchObject and logs stay readable.
    const { cause: _cause, ...rest } = details;
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined) Object.defineProperty(this, key, { value, enumerable: true });
    }
  }
}

// Keeps a remote error's data only when it is small; a hostile server must not be able to
// make every log line that prints the error megabytes long.
export function boundedErrorData(data: unknown): unknown {
  let size: number;
  try {
    const json = JSON.stringify(data); // undefined for undefined, a function, a symbol
    size = json === undefined ? 0 : Buffer.byteLength(json);
  // Data nested deeper than JSON.stringify's stack lands here (JSON.parse reads it: it does not recurse).
  } catch {
    return "[unserializable data omitted]";
  }
  return size <= MAX_ERROR_DATA_BYTES ? data : `[data omitted: ${size} bytes > ${MAX_ERROR_DATA_BYTES}]`;
}

// Turns an abort reason into a short, safe string: reasons are arbitrary objects and are
// never echoed whole.
export function describeReason(reason: unknown): string {
  if (reason instanceof Error) return truncate(`${reason.name}: ${reason.message}`, 200);
  if (typeof reason === "string") return truncate(reason, 200);
  if (reason === undefined) return "aborted";
  return Object.prototype.toString.call(reason);
}

Object.defineProperty(McpError.prototype, "name", { value: "McpError", writable: true, configurable: true });

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
