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
});
