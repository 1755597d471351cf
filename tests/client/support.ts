// The one way the project's client and hardening tests start the reference client: the
// lab harness (a fixture workspace; close and cleanup registered with the test) plus the
// recorded pids that are still alive.
import { McpClient, type ClientObserver, type McpClientOptions } from "#submission/src/mcp-client.ts";
import { isAlive, type FixtureOptions } from "../../fixtures/index.ts";
import { harness, installTimerTracker, type Harness } from "../../labs/33-mcp-lite/tests/support.ts";

// The "project" vitest project has no lab setup file: without this, liveClientTimers()
// always returns [] here and every timer-leak assertion in tests/client passes vacuously.
installTimerTracker();

export interface Started extends Harness<McpClient> {
  /** The recorded pids still alive (zombies count as gone). */
  alive(): number[];
}

export function startClient(fixture: FixtureOptions = {}, options: Partial<McpClientOptions> = {}, observer?: ClientObserver): Started {
  const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000, ...options }, observer), fixture);
  return { ...h, alive: () => h.pids().filter(isAlive) };
}
