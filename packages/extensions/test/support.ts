// Helpers of the package's tests, on top of the project's one set (tests/support.ts): the
// production client started through the shared startClient with its trace collected, and a
// bare fixture workspace for tests that start their own clients.

import { onTestFinished } from "vitest";
import { createFixtureWorkspace, type FixtureOptions, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { startClient, type Started } from "../../../tests/support.ts";
import { McpClient, type McpClientOptions, type McpTraceEvent } from "../src/mcp-client.ts";

export { waitFor } from "../../../tests/support.ts";

export interface Traced extends Started<McpClient> {
  /** Every trace event the client emitted, in order. */
  trace: McpTraceEvent[];
}

// A production client on the fixture server, its trace collected; closed, reaped and removed after the test.
export function startTraced(fixture: FixtureOptions = {}, options: Partial<McpClientOptions> = {}): Traced {
  const trace: McpTraceEvent[] = [];
  const started = startClient(fixture, { onTrace: (event: McpTraceEvent) => trace.push(event), ...options }, (o: McpClientOptions) => new McpClient(o));
  return { ...started, trace };
}

// Registers a workspace for cleanup after the test.
export function workspace(): FixtureWorkspace {
  const ws = createFixtureWorkspace("ext-");
  onTestFinished(async () => {
    await ws.cleanup();
  });
  return ws;
}
