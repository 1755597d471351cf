// Secrets through the manager: a broker gives each start its own token and the manager
// revokes it once that process exited; a rotation is simply the next start's acquire. What
// the server sends back (notifications, tool metadata, error data, stderr) is redacted like
// stderr; results only when the config says redactResults: true.
import { describe, expect, it } from "vitest";
import { isAlive } from "../../../fixtures/index.ts";
import { REDACTED } from "../src/mcp-client.ts";
import type { SecretLease, ServerNotification } from "./types.ts";
import { agentServer, managed, waitFor, workspace } from "./support.ts";

function broker() {
  const log: string[] = [];
  let issued = 0;
  const acquire = async (server: string): Promise<SecretLease> => {
    issued += 1;
    const token = `tok-${issued}-c0ffee`;
    log.push(`acquire ${server} ${token}`);
    return { env: { LEAK_TOKEN: token }, secrets: [token], revoke: () => void log.push(`revoke ${token}`) };
  };
  return { log, acquire };
}

describe("secret broker", () => {
  it("acquires per start, revokes after that process exited, and a restart gets the rotated token", async () => {
    const ws = workspace();
    const { log, acquire } = broker();
    let now = 0;
    const manager = managed({
      servers: { api: agentServer(ws, "leaky", { tools: [{ name: "whoami" }] }) },
      secretBroker: acquire,
      backoffInitialMs: 10,
      now: () => now,
    });
    expect(log).toEqual([]); // nothing acquired before a start
    await expect(manager.callTool("api/whoami")).resolves.toEqual({ content: [{ type: "text", text: "token tok-1-c0ffee" }] });
    expect(log).toEqual(["acquire api tok-1-c0ffee"]);
    const [first] = ws.pids();
    process.kill(first!, "SIGKILL");
    await waitFor(() => log.includes("revoke tok-1-c0ffee"), "the first token to be revoked after its process exited");
    now += 10;
    await expect(manager.callTool("api/whoami")).resolves.toEqual({ content: [{ type: "text", text: "token tok-2-c0ffee" }] });
    expect(log).toEqual(["acquire api tok-1-c0ffee", "revoke tok-1-c0ffee", "acquire api tok-2-c0ffee"]);
    await manager.close();
    expect(log.at(-1)).toBe("revoke tok-2-c0ffee");
    expect(ws.pids().filter(isAlive)).toEqual([]);
  });

  it("a health check's process gets its own lease, revoked when the check is done", async () => {
    const ws = workspace();
    const { log, acquire } = broker();
    const manager = managed({ servers: { api: agentServer(ws, "leaky", { tools: [{ name: "whoami" }] }) }, secretBroker: acquire });
    await expect(manager.healthCheck("api")).resolves.toMatchObject({ ok: true, exited: true });
    await waitFor(() => log.length === 2, "the check's lease to be revoked");
    expect(log).toEqual(["acquire api tok-1-c0ffee", "revoke tok-1-c0ffee"]);
  });

  it("a broker that fails is a failed start, reported without its error text", async () => {
    const ws = workspace();
    const manager = managed({
      servers: { api: agentServer(ws, "leaky", { tools: [{ name: "whoami" }] }) },
      secretBroker: async () => {
        throw new Error("vault down; last token was hunter2");
      },
    });
    const error = await manager.callTool("api/whoami").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", message: "server api: the secret broker failed", reason: "process" });
    expect(JSON.stringify((error as { report(): unknown }).report())).not.toContain("hunter2");
    expect(manager.report().servers[0]).toMatchObject({ state: "backoff", failures: 1, running: false });
    expect(ws.pids()).toEqual([]);
  });
});

describe("redaction of what the server sends", () => {
  it("redacts notifications, tool metadata, error data and stderr; results stay as sent", async () => {
    const ws = workspace();
    const { acquire } = broker();
    const notes: ServerNotification[] = [];
    const manager = managed({
      servers: { api: agentServer(ws, "leaky", { tools: [{ name: "whoami" }, { name: "fail" }], onNotification: (n) => notes.push(n) }) },
      secretBroker: acquire,
    });
    const [whoami] = await manager.tools("api");
    expect(whoami).toMatchObject({ name: "whoami", description: `Calls the API with token ${REDACTED}` });
    await expect(manager.callTool("api/whoami")).resolves.toEqual({ content: [{ type: "text", text: "token tok-1-c0ffee" }] });
    expect(notes).toEqual([{ method: "notifications/message", params: { level: "info", data: `working with token ${REDACTED}` } }]);
    const failed = await manager.callTool("api/fail").catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: "MCP_ERROR", data: { token: REDACTED } });
    await waitFor(() => manager.stderr("api").text !== "", "the server's stderr line");
    expect(manager.stderr("api")).toEqual({ text: `agent-server starting with token ${REDACTED}\n`, truncated: false });
    expect(JSON.stringify(manager.metrics())).not.toContain("c0ffee");
  });

  it("redacts results too with redactResults: true", async () => {
    const ws = workspace();
    const manager = managed({
      servers: { api: agentServer(ws, "leaky", { tools: [{ name: "whoami" }], env: { LEAK_TOKEN: "s3cr3t-value" }, secrets: ["s3cr3t-value"], redactResults: true }) },
    });
    await expect(manager.callTool("api/whoami")).resolves.toEqual({ content: [{ type: "text", text: `token ${REDACTED}` }] });
  });
});
