// A server whose working directory is missing (or is a file) fails to spawn, and Node says
// so as ENOENT of the executable: the error says which directory is wrong instead, with
// code MCP_SPAWN_FAILED and the spawn error as its cause. A missing executable is still
// reported as the executable.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { McpClient } from "../src/mcp-client.ts";
import { managed, workspace } from "./support.ts";

async function spawnError(client: McpClient): Promise<unknown> {
  try {
    await client.initialize();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await client.close();
  }
}

describe("a spawn that fails because of the working directory", () => {
  it("names a working directory that does not exist", async () => {
    const ws = workspace();
    const missing = join(ws.dir, "no", "such", "dir");
    const error = await spawnError(new McpClient({ ...ws.command(), cwd: missing }));
    expect(error).toMatchObject({
      code: "MCP_SPAWN_FAILED",
      message: `could not start ${JSON.stringify(process.execPath)}: working directory ${JSON.stringify(missing)} does not exist (spawn reported ENOENT)`,
      cause: expect.objectContaining({ code: "ENOENT" }),
    });
    expect(ws.pids()).toEqual([]);
  });

  it("names a working directory that is a file", async () => {
    const ws = workspace();
    const file = join(ws.dir, "a-file");
    writeFileSync(file, "not a directory\n");
    const error = await spawnError(new McpClient({ ...ws.command(), cwd: file }));
    expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", message: expect.stringContaining(`working directory ${JSON.stringify(file)} is not a directory`) });
  });

  it("still names the executable when the working directory is fine", async () => {
    const ws = workspace();
    const error = await spawnError(new McpClient({ executable: join(ws.dir, "no-such-program"), cwd: ws.dir }));
    expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", message: `could not start ${JSON.stringify(join(ws.dir, "no-such-program"))}: ENOENT` });
  });

  it("says the same through the manager, in the error and in its fault report", async () => {
    const ws = workspace();
    const missing = join(ws.dir, "gone");
    const manager = managed({ servers: { s: { ...ws.command(), cwd: missing, tools: [{ name: "echo" }] } } });
    const error = await manager.callTool("s/echo", { value: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", message: expect.stringContaining(`working directory ${JSON.stringify(missing)} does not exist`) });
    expect((error as { report(): object }).report()).toMatchObject({ code: "MCP_SPAWN_FAILED", message: (error as Error).message });
    expect(ws.pids()).toEqual([]);
  });
});
