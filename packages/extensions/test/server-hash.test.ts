// The server hash describes what runs. A server whose config names no cwd runs in the
// private default directory (defaultCwd()), so a relative executable or script is looked up
// there, as the spawn does, never in the agent's own cwd; and that directory enters the hash
// as "the default", so the same config hashes alike in every agent process, whatever its cwd.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { FIXTURE_SERVER } from "../../../fixtures/index.ts";
import { defaultCwd } from "../src/mcp-client.ts";
import type { ServerConfig } from "../src/manager.ts";
import { managed, workspace } from "./support.ts";

const SERVER_HASH_MODULE = new URL("../src/server-hash.ts", import.meta.url).pathname;
const TSX = createRequire(import.meta.url).resolve("tsx");

// A file in the private default directory under a fresh name, removed after the test.
function inDefaultCwd(suffix: string): { name: string; path: string } {
  const name = `hash-${randomUUID()}${suffix}`;
  const path = join(defaultCwd(), name);
  onTestFinished(() => rmSync(path, { force: true }));
  return { name, path };
}

// serverHash(config) as a separate agent process started in `cwd` computes it.
async function hashIn(cwd: string, config: object): Promise<string> {
  const script = `const { serverHash } = await import(${JSON.stringify(SERVER_HASH_MODULE)}); process.stdout.write(serverHash(${JSON.stringify(config)}));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--import", TSX, "--input-type=module", "-e", script], { cwd }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

describe("server hash of a server without cwd", () => {
  it("covers a relative script as it is found in the private default directory, where the server runs", async () => {
    const ws = workspace();
    const script = inDefaultCwd(".mjs");
    copyFileSync(FIXTURE_SERVER, script.path);
    const config: ServerConfig = { executable: process.execPath, args: [script.name, "--pid-file", ws.pidFile, "--self-destruct-ms", "60000"], timeoutMs: 10_000, tools: [{ name: "echo" }] };
    const manager = managed({ servers: { s: config } });
    const before = manager.serverHash("s");
    writeFileSync(script.path, "// changed\n", { flag: "a" });
    expect(manager.serverHash("s")).not.toBe(before);
    await expect(manager.callTool("s/echo", { value: 1 })).resolves.toEqual({ content: 1 }); // it runs from there
  });

  it("covers a relative executable as it is found in the private default directory, where the server runs", async () => {
    const ws = workspace();
    const program = inDefaultCwd(".sh");
    writeFileSync(program.path, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE_SERVER)} --pid-file ${JSON.stringify(ws.pidFile)} --self-destruct-ms 60000\n`);
    chmodSync(program.path, 0o755);
    const manager = managed({ servers: { s: { executable: `./${program.name}`, timeoutMs: 10_000, tools: [{ name: "echo" }] } } });
    const before = manager.serverHash("s");
    writeFileSync(program.path, "# changed\n", { flag: "a" });
    expect(manager.serverHash("s")).not.toBe(before);
    await expect(manager.callTool("s/echo", { value: 2 })).resolves.toEqual({ content: 2 });
  });

  it("is the same in agent processes started in different directories", async () => {
    const [a, b] = [workspace(), workspace()];
    const config = { executable: process.execPath, args: [FIXTURE_SERVER] };
    const [inA, inB] = await Promise.all([hashIn(a.dir, config), hashIn(b.dir, config)]);
    expect(inA).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(inB).toBe(inA);
    // A configured cwd is part of what runs, and of the hash.
    const [cwdA, cwdB] = await Promise.all([hashIn(a.dir, { ...config, cwd: a.dir }), hashIn(a.dir, { ...config, cwd: b.dir })]);
    expect(cwdA).not.toBe(cwdB);
  });
});
