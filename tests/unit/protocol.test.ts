import { describe, expect, it } from "vitest";
import { checkInitializeResult, checkToolsResult, classifyLine, isRequestId, preview } from "#submission/src/protocol.ts";

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
    ["JSON null", "null", /not a JSON object/],
    ["a method that is not a string", '{"jsonrpc":"2.0","method":5}', /method must be a non-empty string/],
    ["a request with an error", '{"jsonrpc":"2.0","id":1,"method":"x","error":{"code":1,"message":"m"}}', /cannot carry/],
    ["a request with a fractional id", '{"jsonrpc":"2.0","id":1.5,"method":"x"}', /string or integer/],
    ["a request with a null id", '{"jsonrpc":"2.0","id":null,"method":"x"}', /string or integer/],
    ["an error that is null", '{"jsonrpc":"2.0","id":1,"error":null}', /error must be/],
    ["an error that is a string", '{"jsonrpc":"2.0","id":1,"error":"bad"}', /error must be/],
    ["an error with a fractional code", '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}', /error must be/],
    ["an error without a message", '{"jsonrpc":"2.0","id":1,"error":{"code":1}}', /error must be/],
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

  it("keeps server request ids as sent, strings and integers alike", () => {
    expect(classifyLine('{"jsonrpc":"2.0","id":7,"method":"ping"}')).toMatchObject({ kind: "request", id: 7 });
    expect(classifyLine('{"jsonrpc":"2.0","id":"7","method":"ping"}')).toMatchObject({ kind: "request", id: "7" });
  });

  it("carries an error's data only when the server sent one", () => {
    const without = classifyLine('{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}') as { error: object };
    expect(Object.keys(without.error)).toEqual(["code", "message"]);
    const withNull = classifyLine('{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no","data":null}}') as { error: object };
    expect(withNull.error).toStrictEqual({ code: -1, message: "no", data: null });
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

  it("previews a line of exactly the limit whole, and one character more cut with its length", () => {
    expect(preview("abc", 3)).toBe('"abc"');
    expect(preview("abcd", 3)).toBe('"abc…" (4 chars)');
    expect(preview("x".repeat(120))).toBe(JSON.stringify("x".repeat(120)));
  });
});

describe("result checks", () => {
  it("accepts a complete initialize result and names what is missing otherwise", () => {
    expect(checkInitializeResult({ protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } })).toBeUndefined();
    expect(checkInitializeResult(null)).toMatch(/not an object/);
    expect(checkInitializeResult({ capabilities: {} })).toMatch(/protocolVersion/);
    expect(checkInitializeResult({ protocolVersion: "x" })).toMatch(/capabilities/);
    expect(checkInitializeResult({ protocolVersion: "x", capabilities: {} })).toMatch(/serverInfo/);
    expect(checkInitializeResult({ protocolVersion: "x", capabilities: {}, serverInfo: { name: 1, version: "1" } })).toMatch(/serverInfo/);
    expect(checkInitializeResult({ protocolVersion: "x", capabilities: {}, serverInfo: { name: "s" } })).toMatch(/serverInfo/);
  });

  it("refuses tool lists with missing names, duplicates or no schema", () => {
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {} }] })).toEqual({ tools: [{ name: "a", inputSchema: {} }] });
    expect(checkToolsResult({})).toEqual({ reason: "tools/list result has no tools array" });
    expect(checkToolsResult({ tools: [{ inputSchema: {} }] })).toMatchObject({ reason: expect.stringMatching(/no name/) });
    expect(checkToolsResult({ tools: [{ name: "", inputSchema: {} }] })).toEqual({ reason: "tools[0] has no name" });
    const described = { tools: [{ name: "a", description: "reads a file", inputSchema: {} }] };
    expect(checkToolsResult(described)).toEqual(described);
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {} }, { name: "a", inputSchema: {} }] })).toMatchObject({
      reason: expect.stringMatching(/twice/),
    });
    expect(checkToolsResult({ tools: [{ name: "a" }] })).toMatchObject({ reason: expect.stringMatching(/inputSchema/) });
    expect(checkToolsResult({ tools: [{ name: "a", inputSchema: {}, description: 5 }] })).toMatchObject({
      reason: expect.stringMatching(/description/),
    });
  });
});
