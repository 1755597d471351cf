// Starts the reference client against the fixture with per-test cleanup (the lab harness),
// for the project's own client tests.
import { McpClient, type McpClientOptions } from "#submission/src/mcp-client.ts";
import type { FixtureOptions } from "../../fixtures/index.ts";
import { harness, installTimerTracker } from "../../labs/33-mcp-lite/tests/support.ts";

// The "project" vitest project has no lab setup file: without this, liveClientTimers()
// always returns [] here and every timer-leak assertion in tests/client passes vacuously.
installTimerTracker();

export function startClient(fixture: FixtureOptions = {}, options: Partial<McpClientOptions> = {}) {
  return harness((command) => new McpClient({ ...command, timeoutMs: 10_000, ...options }), fixture);
}
