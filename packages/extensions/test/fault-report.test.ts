// McpError.report(): the seed's fault report, plain JSON, with no arguments or content.
import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import { McpError, type McpFaultReport } from "../src/mcp-client.ts";
import { startTraced } from "./support.ts";

const SECRET = "sk-test-4f9c2a7b1e8d3f60";

async function failure(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  expect(error).toBeInstanceOf(BaseMcpError);
  return error as McpError;
}

describe("McpError.report()", () => {
  it("for a server that died: identity and hash, protocol version, method, id, phase, code, duration, redacted stderr, exit status", async () => {
    const { client, trace } = startTraced({}, { secrets: [SECRET], env: { API_TOKEN: SECRET } });
    await client.initialize();
    const error = await failure(client.callTool("exit", { code: 3, stderr: `fatal: token ${SECRET} rejected\n`, note: "ARG-MARKER" }));
    const report: McpFaultReport = error.report();
    expect(report).toMatchObject({
      code: "MCP_PROCESS_EXIT",
      method: "tools/call",
      requestId: 2,
      phase: "transport",
      reason: "process",
      outcome: "unknown",
      protocolVersion: "2025-06-18",
      exit: { exitCode: 3, signal: null },
      server: {
        executable: basename(process.execPath),
        hash: client.serverHash,
        instanceId: trace[0]!.serverInstanceId,
        name: "lab33-fixture",
        version: "1.0.0",
      },
    });
    expect(report.server.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(report.server.pid).toBeGreaterThan(0);
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
    expect(report.stderr.tail).toContain("fatal: token [REDACTED] rejected");
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    const text = JSON.stringify(report);
    expect(text).not.toContain("ARG-MARKER");
    expect(text).not.toContain(SECRET);
  });

  it("for a timeout: the deadline and a duration at least as long", async () => {
    const { client } = startTraced();
    await client.initialize();
    const report = (await failure(client.callTool("never", {}, { timeoutMs: 200 }))).report();
    expect(report).toMatchObject({ code: "MCP_TIMEOUT", timeoutMs: 200, method: "tools/call", phase: "request", exit: null, reason: null });
    expect(report.durationMs).toBeGreaterThanOrEqual(190);
  });

  it("for a remote error: the remote code, never the error's data", async () => {
    const { client } = startTraced();
    await client.initialize();
    const error = await failure(client.callTool("fail", { code: -32001, data: { rows: ["CONTENT-MARKER"] } }));
    expect(error.data).toEqual({ rows: ["CONTENT-MARKER"] }); // the caller still has it
    const report = error.report();
    expect(report).toMatchObject({ code: "MCP_ERROR", remoteCode: -32001, outcome: null });
    expect(JSON.stringify(report)).not.toContain("CONTENT-MARKER");
  });

  it("for a spawn failure and for bad options, without a server", async () => {
    const { client } = startTraced({}, { executable: "/nonexistent/mcp-server" });
    const report = (await failure(client.initialize())).report();
    expect(report).toMatchObject({ code: "MCP_SPAWN_FAILED", phase: "spawn", reason: "process", server: { executable: "mcp-server", instanceId: null } });
    expect(report.server.hash).toMatch(/^sha256:/);
    expect(() => startTraced({}, { timeoutMs: -1 })).toThrow(McpError);
  });
});
