// Shared helpers of the package's tests: a production client on a fresh fixture workspace
// with its trace collected and its cleanup registered per test, and a poll that only
// detects hangs (it never decides an outcome).

import { onTestFinished } from "vitest";
import { createFixtureWorkspace, isAlive, type FixtureOptions, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { McpClient, type McpClientOptions, type McpTraceEvent } from "../src/mcp-client.ts";

/** Longest a poll waits before failing with its label, in ms: a hang detector. */
export const POLL_MS = 15_000;

export interface Started {
  client: McpClient;
  ws: FixtureWorkspace;
  trace: McpTraceEvent[];
  alive(): number[];
}

type Extras = Partial<McpClientOptions>;

// A production client on the fixture server; closed, reaped and removed after the test.
export function startClient(fixture: FixtureOptions = {}, options: Extras = {}): Started {
  const ws = createFixtureWorkspace("ext-");
  const trace: McpTraceEvent[] = [];
  const client = new McpClient({
    ...ws.command({ selfDestructMs: 60_000, ...fixture }),
    timeoutMs: 10_000,
    onTrace: (event) => trace.push(event),
    ...options,
  });
  onTestFinished(async () => {
    await Promise.race([client.close().catch(() => {}), sleep(10_000)]);
    await ws.cleanup();
  });
  return { client, ws, trace, alive: () => ws.pids().filter(isAlive) };
}

// Registers a workspace for cleanup after the test.
export function workspace(): FixtureWorkspace {
  const ws = createFixtureWorkspace("ext-");
  onTestFinished(async () => {
    await ws.cleanup();
  });
  return ws;
}

export async function until(condition: () => boolean, label: string, ms = POLL_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${label} after ${ms} ms`);
    await sleep(5);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
