import { describe, expect, it } from "vitest";
import { boundedErrorData, describeReason, MAX_ERROR_DATA_BYTES, McpError } from "#submission/src/errors.ts";
import { DEFAULT_TIMEOUT_MS, resolveOptions } from "#submission/src/options.ts";
import { checkInitializeResult, checkToolsResult, classifyLine, isRequestId, preview } from "#submission/src/protocol.ts";
import { decodeWholeCharacters, StderrTail } from "#submission/src/stderr-tail.ts";

describe("StderrTail", () => {
  it("keeps everything while under the cap", () => {
    const tail = new StderrTail(16);
    tail.push(Buffer.from("abc"));
    tail.push(Buffer.from("def"));
    expect(tail).toMatchObject({ text: "abcdef", truncated: false, size: 6 });
  });

  it("keeps the last bytes and says it dropped the rest", () => {
    const tail = new StderrTail(8);
    for (const part of ["0123", "4567", "89ab", "cdef"]) tail.push(Buffer.from(part));
    expect(tail).toMatchObject({ text: "89abcdef", truncated: true, size: 8 });
  });

  it("keeps the tail of a single chunk larger than the cap", () => {
    const tail = new StderrTail(4);
    tail.push(Buffer.from("hello world"));
    expect(tail).toMatchObject({ text: "orld", truncated: true });
  });

  it("never shows half a Chinese character at either end", () => {
    const tail = new StderrTail(7); // "崩溃了" is 9 bytes: the cut lands inside "崩"
    tail.push(Buffer.from("崩溃了"));
    expect(tail.text).toBe("溃了");
    expect(tail.truncated).toBe(true);
    // A writer that stopped mid-character: the unfinished tail is not decoded as garbage.
    const bytes = Buffer.from("错误");
    expect(decodeWholeCharacters(bytes.subarray(0, 4), false)).toBe("错");
  });

  it("keeps nothing with a zero cap but still reports truncation", () => {
    const tail = new StderrTail(0);
    tail.push(Buffer.from("x"));
    expect(tail).toMatchObject({ text: "", truncated: true });
  });
});

describe("classifyLine", () => {
  it("recognises responses, error responses, server requests and notifications", () => {
    expect(classifyLine('{"jsonrpc":"2.0","id":3,"result":{"ok":true}}')).toEqual({ kind: "response", id: 3, result: { ok: true } });
    expect(classifyLine('{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no","data":[1]}}')).toEqual({
      kind: "error-response",
      id: 4,
      error: { code: -1, message: "no", data: [1] },
    });
    expect(classifyLine('{"jsonrpc":"2.0","id":"s1","method":"ping"}')).toMatchObject({ kind: "request", id: "s1", method: "ping" });
    expect(classifyLine('{"jsonrpc":"2.0","method":"notifications/message","params":{}}')).toMatchObject({ kind: "notification" });
  });

  it.each([
    ["not JSON", "ready", /not JSON/],
    ["a JSON array", "[1,2,3]", /not a JSON object/],
    ["a JSON number", "42", /not a JSON object/],
    ["the wrong jsonrpc", '{"jsonrpc":"1.0","id":1,"result":1}', /jsonrpc must be "2.0"/],
    ["both result and error", '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}', /got both/],
    ["neither result nor error", '{"jsonrpc":"2.0","id":1}', /got neither/],
    ["a response without id", '{"jsonrpc":"2.0","result":1}', /needs an id/],
    ["a malformed error object", '{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}', /error must be/],
    ["an empty method", '{"jsonrpc":"2.0","method":""}', /method must be/],
    ["a request with a result", '{"jsonrpc":"2.0","id":1,"method":"x","result":1}', /cannot carry/],
    ["a request with an object id", '{"jsonrpc":"2.0","id":{},"method":"x"}', /string or integer/],
  ])("calls %s invalid", (_name, line, reason) => {
    const outcome = classifyLine(line);
    expect(outcome.kind).toBe("invalid");
    expect((outcome as { reason: string }).reason).toMatch(reason);
  });

  it("only treats positive safe integers as request ids", () => {
    expect(isRequestId(3)).toBe(true);
    expect(isRequestId("3")).toBe(false);
    expect(isRequestId(3.5)).toBe(false);
    expect(isRequestId(0)).toBe(false);
    expect(isRequestId(null)).toBe(false);
    expect(isRequestId(2 ** 60)).toBe(false);
  });

  it("previews at most the first bytes of a bad line", () => {
    const shown = preview("x".repeat(10_000));
    expect(shown.length).toBeLessThan(200);
    expect(shown).toContain("10000 chars");
  });
});

describe("result checks", () => {
  it("accepts a complete initialize result and names what is missing otherwise", () => {
    expect(checkInitializeResult({ protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } })).toBeUndefined();
    expect(checkInitializeResult(null)).toMatch(/not an object/);
    expect(checkInitializeResult({ capabilities: {} })).toMatch(/protocolVersion/);
    expect(checkInitializeResult({ protocolVersion: "x" })).toMatch(/capabilities/);
    expect(checkInitializeResult({ protocolVersion: "x", capabilities: {} })).toMatch(/serverInfo/);
  });

  it("refuses tool lists with missing names, duplicates or no schema", () => {
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {} }] })).toEqual({ tools: [{ name: "a", inputSchema: {} }] });
    expect(checkToolsResult({})).toEqual({ reason: "tools/list result has no tools array" });
    expect(checkToolsResult({ tools: [{ inputSchema: {} }] })).toMatchObject({ reason: expect.stringMatching(/no name/) });
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {} }, { name: "a", inputSchema: {} }] })).toMatchObject({
      reason: expect.stringMatching(/twice/),
    });
    expect(checkToolsResult({ tools: [{ name: "a" }] })).toMatchObject({ reason: expect.stringMatching(/inputSchema/) });
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {}, description: 5 }] })).toMatchObject({
      reason: expect.stringMatching(/description/),
    });
  });
});

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
});

describe("errors", () => {
  it("keeps small remote data and replaces large data with a note", () => {
    expect(boundedErrorData({ a: 1 })).toEqual({ a: 1 });
    expect(boundedErrorData("x".repeat(MAX_ERROR_DATA_BYTES + 10))).toMatch(/data omitted/);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(boundedErrorData(circular)).toMatch(/unserializable/);
    expect(boundedErrorData(undefined)).toBeUndefined();
  });

  it("describes abort reasons without echoing arbitrary objects", () => {
    expect(describeReason(new Error("stop"))).toBe("Error: stop");
    expect(describeReason("because")).toBe("because");
    expect(describeReason(undefined)).toBe("aborted");
    expect(describeReason({ secret: "token" })).toBe("[object Object]");
    expect(describeReason("y".repeat(500)).length).toBeLessThan(210);
  });

  it("only carries the fields that have values, and keeps the cause", () => {
    const cause = new Error("ENOENT");
    const error = new McpError("MCP_SPAWN_FAILED", "could not start", { cause, phase: "spawn" });
    expect(error.cause).toBe(cause);
    expect(Object.keys(error)).toEqual(["code", "phase"]);
  });
});
