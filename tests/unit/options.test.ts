import { describe, expect, it } from "vitest";
import { McpError } from "#submission/src/errors.ts";
import { DEFAULT_TIMEOUT_MS, resolveOptions } from "#submission/src/options.ts";

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
