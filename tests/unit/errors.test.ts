import { describe, expect, it } from "vitest";
import { boundedErrorData, describeReason, MAX_ERROR_DATA_BYTES, McpError } from "#submission/src/errors.ts";

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

  it("keeps remote data of exactly the limit, and omits one byte more with its size", () => {
    const exact = "x".repeat(MAX_ERROR_DATA_BYTES - 2); // JSON adds two quotes
    expect(boundedErrorData(exact)).toBe(exact);
    const over = `${exact}x`;
    expect(boundedErrorData(over)).toBe(`[data omitted: ${MAX_ERROR_DATA_BYTES + 1} bytes > ${MAX_ERROR_DATA_BYTES}]`);
  });

  it("cuts long abort reasons at 200 characters with an ellipsis, and keeps 200 whole", () => {
    expect(describeReason("y".repeat(200))).toBe("y".repeat(200));
    expect(describeReason("y".repeat(201))).toBe(`${"y".repeat(200)}…`);
  });

  it("has no cause when none was given", () => {
    const error = new McpError("MCP_TIMEOUT", "late");
    expect("cause" in error).toBe(false);
    expect(Object.keys(error)).toEqual(["code"]);
  });

  it("is named McpError, a name a subclass or caller may still change", () => {
    const error = new McpError("MCP_TIMEOUT", "late");
    expect(error.name).toBe("McpError");
    expect(String(error)).toBe("McpError: late");
    expect(Object.getOwnPropertyDescriptor(McpError.prototype, "name")).toEqual({
      value: "McpError",
      writable: true,
      enumerable: false,
      configurable: true,
    });
    error.name = "Renamed";
    expect(error.name).toBe("Renamed");
  });
});
