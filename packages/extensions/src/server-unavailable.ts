// The error a ServerManager raises instead of starting a server that is backing off or
// quarantined (server-manager.ts).

import { McpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";

/** Why the manager refused to start the server now. */
export type Availability = "backoff" | "quarantined";

// Raised instead of starting a server that is backing off or quarantined. Its code is
// MCP_NOT_INITIALIZED (no healthy server), and it says when a retry makes sense.
export class ServerUnavailableError extends McpError {
  readonly availability: Availability;
  readonly failures: number;
  /** Ms until a start is allowed again; undefined when quarantined. */
  readonly retryInMs: number | undefined;

  constructor(availability: Availability, failures: number, retryInMs: number | undefined, cause: unknown) {
    const why =
      availability === "quarantined"
        ? `quarantined after ${failures} consecutive failures`
        : `backing off after ${failures} failure(s); next start allowed in ${retryInMs} ms`;
    super("MCP_NOT_INITIALIZED", `server unavailable: ${why}`, { cause, phase: "spawn" });
    this.availability = availability;
    this.failures = failures;
    this.retryInMs = retryInMs;
  }
}
