// One call's wait for work it shares with other calls: its server's start
// (server-manager.ts), or a tools/list in flight (manager-tools.ts). The call's own signal
// and timeoutMs hold from the moment it is made. An already aborted signal starts nothing;
// an abort, or the call's deadline, while it waits ends this call's wait (MCP_ABORTED,
// MCP_TIMEOUT; its request was never sent), not the shared work, which goes on for the
// other callers.

import { McpError, type McpErrorCode } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import type { CallOptions } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";

export function waitForStart<T>(method: string, options: CallOptions, start: () => Promise<T>): Promise<T> {
  return waitShared(method, options, start, "while its server started");
}

// Waits for `shared()` (called unless the signal is already aborted) with the call's own
// signal and deadline; `during` words what it was waiting for.
export function waitShared<T>(method: string, { signal, timeoutMs }: CallOptions, shared: () => Promise<T>, during: string): Promise<T> {
  if (signal?.aborted) return Promise.reject(notSent("MCP_ABORTED", `${method}: aborted before it was sent`, method, { cause: signal.reason }));
  const ready = shared();
  if (!signal && timeoutMs === undefined) return ready;
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(notSent("MCP_ABORTED", `${method}: aborted ${during}`, method, { cause: signal?.reason })));
    signal?.addEventListener("abort", onAbort, { once: true });
    // (Only a valid deadline: a timeoutMs that is no positive integer is the client's to refuse.)
    if (typeof timeoutMs === "number" && Number.isInteger(timeoutMs) && timeoutMs > 0) {
      timer = setTimeout(() => finish(() => reject(notSent("MCP_TIMEOUT", `${method}: timed out after ${timeoutMs} ms ${during}`, method, { timeoutMs }))), timeoutMs);
    }
    ready.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

// A call's own AbortController, aborted with the caller's signal's reason (now, if it is
// aborted already), so a parent can end the call through the client's normal settle path;
// unlink() removes the listener once the call is done.
export function linkedController(signal: AbortSignal | undefined): { controller: AbortController; unlink: () => void } {
  const controller = new AbortController();
  const forward = () => controller.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener("abort", forward, { once: true });
  return { controller, unlink: () => signal?.removeEventListener("abort", forward) };
}

// A call that ended before its server was ready: nothing was sent.
function notSent(code: McpErrorCode, message: string, method: string, details: { cause?: unknown; timeoutMs?: number }): McpError {
  return new McpError(code, message, { method, phase: "request", outcome: "not-sent", ...details });
}
