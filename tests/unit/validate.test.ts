import { describe, expect, it } from "vitest";
import { McpError } from "#submission/src/errors.ts";
import { check, describeValue, integerOption, throwInvalid } from "#submission/src/validate.ts";

// The error a call threw, or a failure when it returned.
function thrown(run: () => unknown): McpError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error("expected a throw");
}

describe("validate", () => {
  it("throws MCP_INVALID_ARGUMENT with the message and the phase it was given", () => {
    const error = thrown(() => throwInvalid("bad thing", "configure"));
    expect(error).toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: "bad thing", phase: "configure" });
  });

  it("check() passes silently and fails as '<what> must be <rule>, got <value>'", () => {
    expect(() => check(true, "x", "anything", 1, "request")).not.toThrow();
    const error = thrown(() => check(false, "signal", "an AbortSignal", {}, "request"));
    expect(error).toMatchObject({ message: "signal must be an AbortSignal, got an object", phase: "request" });
  });

  it("describes bad values briefly and never whole", () => {
    expect(describeValue("abc")).toBe('"abc"');
    expect(describeValue("x".repeat(81))).toBe(`"${"x".repeat(80)}"…`);
    expect(describeValue("x".repeat(80))).toBe(`"${"x".repeat(80)}"`);
    expect(describeValue(1.5)).toBe("1.5");
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue(null)).toBe("null");
    expect(describeValue(() => 1)).toBe("a function");
    expect(describeValue([1])).toBe("an array");
    expect(describeValue({ secret: "token" })).toBe("an object");
  });

  it("integerOption returns the fallback for undefined and the value when in range", () => {
    expect(integerOption("n", undefined, 7, { min: 1 }, "configure")).toBe(7);
    expect(integerOption("n", 1, 7, { min: 1, max: 1 }, "configure")).toBe(1);
    expect(integerOption("n", 0, 7, { min: 0, max: 5 }, "configure")).toBe(0);
    expect(integerOption("n", 5, 7, { min: 0, max: 5 }, "configure")).toBe(5);
    expect(integerOption("n", Number.MAX_SAFE_INTEGER, 7, { min: 1 }, "configure")).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    [0, { min: 1 }, "n must be a positive integer, got 0"],
    [6, { min: 0, max: 5 }, "n must be a non-negative integer no larger than 5, got 6"],
    [-1, { min: 0 }, "n must be a non-negative integer, got -1"],
    [1.5, { min: 1, max: 9 }, "n must be a positive integer no larger than 9, got 1.5"],
    ["3", { min: 1 }, 'n must be a positive integer, got "3"'],
    [Number.NaN, { min: 1 }, "n must be a positive integer, got NaN"],
    [2 ** 60, { min: 1 }, `n must be a positive integer, got ${2 ** 60}`],
  ] as const)("integerOption refuses %j in %j", (value, range, message) => {
    const error = thrown(() => integerOption("n", value, 7, range, "request"));
    expect(error).toMatchObject({ code: "MCP_INVALID_ARGUMENT", message, phase: "request" });
  });
});
