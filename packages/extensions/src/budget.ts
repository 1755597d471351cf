// Byte budgets tied to the caller's (the agent's context) budget: each call takes its
// request bytes out of `requestBytes` before anything is written, and its response bytes
// out of `responseBytes` when the answer arrives. A call the budget cannot cover is
// stopped with MCP_ABORTED, reason "budget": a deliberate stop, not a tool failure.
// maxLineBytes still bounds what one response may cost in memory; the budget bounds what
// reaches the agent.

/** Bytes the caller still allows; the client decrements these fields in place. */
export interface McpBudget {
  requestBytes: number;
  responseBytes: number;
}

// Says what is wrong with a budget object, or undefined when it is usable.
export function budgetProblem(budget: unknown): string | undefined {
  if (budget === null || typeof budget !== "object") return "budget must be an object { requestBytes, responseBytes }";
  for (const key of ["requestBytes", "responseBytes"] as const) {
    const value = (budget as Record<string, unknown>)[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      return `budget.${key} must be a finite number of bytes >= 0, got ${String(value)}`;
    }
  }
  return undefined;
}

// Serialized size of a value in bytes; undefined when it cannot be serialized (the
// reference client then refuses the call itself).
export function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text);
  } catch {
    return undefined;
  }
}
