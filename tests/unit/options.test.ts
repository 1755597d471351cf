import { describe, expect, it } from "vitest";
import { McpError } from "#submission/src/errors.ts";
import {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_MAX_NOTIFICATION_BYTES_PER_SECOND,
  DEFAULT_MAX_NOTIFICATIONS_PER_SECOND,
  DEFAULT_MAX_PENDING,
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_MAX_STDERR_BYTES,
  DEFAULT_TIMEOUT_MS,
  resolveCallTimeout,
  resolveOptions,
} from "#submission/src/options.ts";

describe("resolveOptions", () => {
  it("fills in the documented defaults", () => {
    expect(resolveOptions({ executable: "node" })).toMatchObject({ args: [], timeoutMs: DEFAULT_TIMEOUT_MS, closeTimeoutMs: 2_000 });
  });

  it.each([
    [{ executable: "" }, /executable/],
    [{ executable: "   " }, /executable/],
    [{ executable: 42 }, /executable/],
    [{ executable: "node", args: "a b" }, /args must be an array/],
    [{ executable: "node", args: ["ok", 3] }, /args\[1\]/],
    [{ executable: "node", args: ["a\0b"] }, /NUL/],
    [{ executable: "node", env: { TOKEN: 1 } }, /env.TOKEN/],
    [{ executable: "node", env: [] }, /env must be an object/],
    [{ executable: "node", cwd: "" }, /cwd/],
    [{ executable: "node", timeoutMs: 0 }, /timeoutMs/],
    [{ executable: "node", timeoutMs: 1.5 }, /timeoutMs/],
    [{ executable: "node", timeoutMs: 2 ** 40 }, /timeoutMs/],
    [{ executable: "node", closeTimeoutMs: -1 }, /closeTimeoutMs/],
    [{ executable: "node", maxLineBytes: Number.NaN }, /maxLineBytes/],
    [{ executable: "node", maxStderrBytes: -1 }, /maxStderrBytes/],
    [{ executable: "node", maxPending: 0 }, /maxPending/],
    [{ executable: "node", onNotification: "x" }, /onNotification/],
    [{ executable: "node", clientInfo: { name: 1 } }, /clientInfo/],
  ])("refuses %j with MCP_INVALID_ARGUMENT", (options, message) => {
    let error: unknown;
    try {
      resolveOptions(options as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: expect.stringMatching(message) });
  });

  it("states every default once, with the documented values", () => {
    expect(resolveOptions({ executable: "node" })).toEqual({
      executable: "node",
      args: [],
      cwd: undefined,
      env: {},
      timeoutMs: 30_000,
      closeTimeoutMs: 2_000,
      maxLineBytes: 1024 * 1024,
      maxStderrBytes: 64 * 1024,
      maxPending: 256,
      maxRequestBytes: 16 * 1024 * 1024,
      maxNotificationsPerSecond: 1_000,
      maxNotificationBytesPerSecond: 1024 * 1024,
      onNotification: undefined,
      clientInfo: { name: "lab33-mcp-lite-client", version: "1.0.0" },
    });
    expect([DEFAULT_TIMEOUT_MS, DEFAULT_CLOSE_TIMEOUT_MS, DEFAULT_MAX_PENDING]).toEqual([30_000, 2_000, 256]);
    expect([DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_STDERR_BYTES, DEFAULT_MAX_REQUEST_BYTES]).toEqual([1_048_576, 65_536, 16_777_216]);
    expect([DEFAULT_MAX_NOTIFICATIONS_PER_SECOND, DEFAULT_MAX_NOTIFICATION_BYTES_PER_SECOND]).toEqual([1_000, 1_048_576]);
  });

  it("copies what it was given, so later changes by the caller do not reach the client", () => {
    const args = ["server.mjs"];
    const env = { MODE: "test" };
    const clientInfo = { name: "agent", version: "2", extra: true };
    const onNotification = () => {};
    const resolved = resolveOptions({ executable: "node", args, env, cwd: "/tmp", clientInfo, onNotification, maxStderrBytes: 0 });
    expect(resolved).toMatchObject({ args: ["server.mjs"], env: { MODE: "test" }, cwd: "/tmp", maxStderrBytes: 0, onNotification });
    expect(resolved.args).not.toBe(args);
    expect(resolved.env).not.toBe(env);
    expect(resolved.clientInfo).toEqual({ name: "agent", version: "2" });
  });

  it.each([
    [null, "options must be an object, got null"],
    ["node", 'options must be an object, got "node"'],
    [{ executable: "" }, 'executable must be a non-empty string (a program path, not a shell command), got ""'],
    [{ executable: "no\0de" }, 'executable must be free of NUL bytes, got "no\\u0000de"'],
    [{ executable: "node", args: [1] }, "args[0] must be a string, got 1"],
    [{ executable: "node", args: ["a", "b\0"] }, 'args[1] must be free of NUL bytes, got "b\\u0000"'],
    [{ executable: "node", cwd: 7 }, "cwd must be a non-empty string, got 7"],
    [{ executable: "node", cwd: "" }, 'cwd must be a non-empty string, got ""'],
    [{ executable: "node", env: null }, "env must be an object of strings, got null"],
    [{ executable: "node", env: { A: "1", B: 2 } }, "env.B must be a string, got 2"],
    [{ executable: "node", onNotification: {} }, "onNotification must be a function, got an object"],
    [{ executable: "node", clientInfo: { name: "a" } }, "clientInfo must be { name: string, version: string }, got an object"],
    [{ executable: "node", clientInfo: { version: "1" } }, "clientInfo must be { name: string, version: string }, got an object"],
    [{ executable: "node", clientInfo: "agent" }, 'clientInfo must be { name: string, version: string }, got "agent"'],
    [{ executable: "node", maxRequestBytes: 0 }, "maxRequestBytes must be a positive integer no larger than 1073741824, got 0"],
    [{ executable: "node", maxNotificationsPerSecond: 0 }, "maxNotificationsPerSecond must be a positive integer no larger than 1000000000, got 0"],
    [{ executable: "node", maxNotificationBytesPerSecond: 2 ** 41 }, `maxNotificationBytesPerSecond must be a positive integer no larger than ${2 ** 40}, got ${2 ** 41}`],
    [{ executable: "node", maxStderrBytes: 2 ** 31 }, `maxStderrBytes must be a non-negative integer no larger than ${2 ** 30}, got ${2 ** 31}`],
    [{ executable: "node", timeoutMs: 2 ** 31 }, `timeoutMs must be a positive integer no larger than 2147483647, got ${2 ** 31}`],
  ])("refuses %j with exactly: %s", (options, message) => {
    expect(() => resolveOptions(options as never)).toThrow(
      expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", phase: "configure", message }),
    );
  });

  it("checks a per-call deadline as call input: its own default, the timer's limit, phase request", () => {
    expect(resolveCallTimeout(undefined, 1_234)).toBe(1_234);
    expect(resolveCallTimeout(2_147_483_647, 1)).toBe(2_147_483_647);
    expect(() => resolveCallTimeout(0, 1)).toThrow(
      expect.objectContaining({ phase: "request", message: "timeoutMs must be a positive integer no larger than 2147483647, got 0" }),
    );
    expect(() => resolveCallTimeout(2_147_483_648, 1)).toThrow(/no larger than 2147483647/);
  });
});
