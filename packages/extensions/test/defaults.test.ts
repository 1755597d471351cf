// The package's own defaults for the servers it starts: clientInfo names this package at
// its version, and a server whose config names no cwd runs in a private empty directory,
// never in the agent's own working directory (often the user's repository).
import { readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import { CLIENT_INFO } from "../src/mcp-client.ts";
import { managed, workspace } from "./support.ts";

const PACKAGE = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { name: string; version: string };

describe("defaults", () => {
  it("introduces itself as this package, at its version", async () => {
    expect(CLIENT_INFO).toEqual({ name: PACKAGE.name, version: PACKAGE.version });
    const ws = workspace();
    const manager = managed({ servers: { s: { ...ws.command({ selfDestructMs: 60_000 }), tools: [{ name: "echo" }] } } });
    await manager.callTool("s/echo", { value: 1 });
    expect(received(ws.log(), "initialize")[0].params.clientInfo).toEqual({ name: "@coding-agent/extensions", version: PACKAGE.version });
  });

  it("starts a server without a configured cwd in a private empty directory, not the agent's cwd", async () => {
    const ws = workspace();
    const command = ws.command({ selfDestructMs: 60_000 }); // names no cwd
    const manager = managed({ servers: { s: { ...command, tools: [{ name: "inspect" }] } } });
    const seen = (await manager.callTool("s/inspect")) as { cwd: string };
    expect(seen.cwd).not.toBe(process.cwd());
    expect(seen.cwd.startsWith(tmpdir())).toBe(true);
    expect(statSync(seen.cwd).mode & 0o777).toBe(0o700);
    const configured = managed({ servers: { s: { ...command, cwd: ws.dir, tools: [{ name: "inspect" }] } } });
    await expect(configured.callTool("s/inspect")).resolves.toMatchObject({ cwd: ws.dir });
  });
});
