import { describe, expect, it } from "vitest";
import {
  abortedBeforeStart,
  clientClosed,
  errorWithContext,
  exitDetails,
  notInitialized,
  serializeParams,
  spawnFailed,
} from "#submission/src/client-errors.ts";
import type { PendingRecord } from "#submission/src/pending.ts";

const record = (written: boolean): PendingRecord => ({ id: 4, method: "tools/call", startedAt: 0, resolve() {}, reject() {}, written });

describe("client errors", () => {
  it("name the request they ended and say whether the server may have run it", () => {
    expect(errorWithContext("MCP_TIMEOUT", "timed out", record(true), { phase: "request" })).toMatchObject({
      code: "MCP_TIMEOUT",
      message: "tools/call (id 4): timed out",
      method: "tools/call",
      requestId: 4,
      outcome: "unknown",
      phase: "request",
    });
    expect(errorWithContext("MCP_TIMEOUT", "timed out", record(false)).outcome).toBe("not-sent");
    // The server answered: no doubt about whether it ran.
    expect(errorWithContext("MCP_ERROR", "no", record(true))).not.toHaveProperty("outcome");
  });

  it("say a call was aborted before it was sent, keeping the reason as cause", () => {
    const reason = new Error("stop");
    expect(abortedBeforeStart("ping", reason)).toMatchObject({
      code: "MCP_ABORTED",
      message: "ping: aborted before it was sent: Error: stop",
      method: "ping",
      phase: "request",
      cause: reason,
    });
  });

  it("name the method for not-initialized and closed, each in its phase", () => {
    expect(notInitialized("tools/list")).toMatchObject({
      code: "MCP_NOT_INITIALIZED",
      message: "tools/list: call initialize() first (no initialized server)",
      method: "tools/list",
      phase: "request",
    });
    expect(clientClosed("ping")).toMatchObject({ code: "CLIENT_CLOSED", message: "ping: the client was closed", method: "ping", phase: "close" });
  });

  it("report a failed spawn with the system's code, or 'unknown'", () => {
    const cause = Object.assign(new Error("spawn x ENOENT"), { code: "ENOENT" });
    expect(spawnFailed("x", cause)).toMatchObject({ code: "MCP_SPAWN_FAILED", message: 'could not start "x": ENOENT', phase: "spawn", cause });
    expect(spawnFailed("x", new Error("odd")).message).toBe('could not start "x": unknown');
  });

  it("carry an exit's code, signal and stderr tail", () => {
    expect(exitDetails({ exitCode: 3, signal: null }, { text: "boom", truncated: true })).toEqual({
      exitCode: 3,
      signal: null,
      stderr: "boom",
      stderrTruncated: true,
      phase: "transport",
    });
  });

  it("serialize params, or refuse what JSON cannot carry as an invalid argument", () => {
    expect(serializeParams({ a: [1, "x"] })).toBe('{"a":[1,"x"]}');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => serializeParams(circular)).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", phase: "request" }));
    expect(() => serializeParams({ n: 1n })).toThrow(/arguments are not JSON-serializable: /);
  });
});
