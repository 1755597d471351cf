// `await using` support: [Symbol.asyncDispose]() of McpManager and of McpClient is their
// close(), so leaving the block stops every server they started. (Called directly here: the
// repository's toolchain need not parse `await using`.) Where the runtime has no
// Symbol.asyncDispose, nothing is defined, not even a method named "undefined".
import { describe, expect, it } from "vitest";
import { isAlive } from "../../../fixtures/index.ts";
import { defineAsyncDispose } from "../src/dispose.ts";
import { McpManager } from "../src/manager.ts";
import { McpClient } from "../src/mcp-client.ts";
import { managed, startTraced, workspace } from "./support.ts";

describe("Symbol.asyncDispose", () => {
  it("closes the manager: every server it started is gone, later calls are refused", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: { ...ws.command({ selfDestructMs: 60_000 }), tools: [{ name: "echo" }] } } });
    await manager.callTool("s/echo", { value: 1 });
    const [pid] = ws.pids();
    expect(isAlive(pid!)).toBe(true);
    await manager[Symbol.asyncDispose]();
    expect(isAlive(pid!)).toBe(false);
    expect(manager.report()).toMatchObject({ state: "closed", shutdownReason: "shutdown" });
    await expect(manager.callTool("s/echo", { value: 2 })).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
  });

  it("closes the client: its server is gone, later calls are refused", async () => {
    const { client } = startTraced({ selfDestructMs: 60_000 });
    await client.initialize();
    const pid = client.pid!;
    await client[Symbol.asyncDispose]();
    expect(client.pid).toBeUndefined();
    expect(isAlive(pid)).toBe(false);
    await expect(client.listTools()).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
  });

  it("is a non-enumerable method of each prototype", () => {
    for (const type of [McpManager, McpClient]) {
      const descriptor = Object.getOwnPropertyDescriptor(type.prototype, Symbol.asyncDispose);
      expect(descriptor).toMatchObject({ enumerable: false, writable: true, configurable: true });
      expect(typeof descriptor?.value).toBe("function");
    }
  });

  it("defines nothing where the runtime has no Symbol.asyncDispose", () => {
    class Closeable {
      async close(): Promise<void> {}
    }
    defineAsyncDispose(Closeable, {});
    expect(Reflect.ownKeys(Closeable.prototype)).toEqual(["constructor", "close"]);
    const symbol = Symbol("asyncDispose");
    defineAsyncDispose(Closeable, { asyncDispose: symbol });
    expect(Reflect.ownKeys(Closeable.prototype)).toEqual(["constructor", "close", symbol]);
  });
});
