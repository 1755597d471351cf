// Helpers of the package's tests, on top of the project's one set (tests/support.ts): the
// production client started through the shared startClient with its trace collected, a
// bare fixture workspace for tests that start their own clients, and the manager's
// failure-pattern server with a manager closed after each test.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";
import { createFixtureWorkspace, type FixtureOptions, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { startClient, type Started } from "../../../tests/support.ts";
import { McpManager, type McpManagerOptions, type ServerConfig } from "../src/manager.ts";
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

/** The manager's failure-pattern server (servers/agent-server.mjs). */
export const AGENT_SERVER = fileURLToPath(new URL("./servers/agent-server.mjs", import.meta.url));

// A config for agent-server.mjs in `mode`, its pids recorded in the workspace.
export function agentServer(ws: FixtureWorkspace, mode: "hostile" | "many" | "leaky", extra: Partial<ServerConfig> = {}): ServerConfig {
  const args = [AGENT_SERVER, "--mode", mode, "--pid-file", ws.pidFile, "--log", ws.logFile];
  return { executable: process.execPath, args, timeoutMs: 10_000, tools: [], ...extra };
}

// The methods agent-server.mjs received so far (its --log file), in order.
export function methods(ws: FixtureWorkspace): string[] {
  return existsSync(ws.logFile) ? readFileSync(ws.logFile, "utf8").split("\n").filter(Boolean) : [];
}

// A manager closed after the test (every server it started is gone when close() resolves).
export function managed(options: McpManagerOptions): McpManager {
  const manager = new McpManager(options);
  onTestFinished(() => manager.close());
  return manager;
}

// Kills a process group member left running by a failed test (a frozen server included).
export function killAfter(pids: () => number[]): void {
  onTestFinished(() => {
    for (const pid of pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });
}
