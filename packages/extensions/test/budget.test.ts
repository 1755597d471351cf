// Byte budgets drawn from the caller's budget object: request bytes before any write,
// response bytes when the answer arrives; running out is a "budget" stop.
import { describe, expect, it } from "vitest";
import type { McpBudget } from "../src/mcp-client.ts";
import { startTraced } from "./support.ts";

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
// What a call stopped by the budget rejects with: MCP_ABORTED, reason budget, how far it got, why.
const budgetStop = (outcome: "not-sent" | "unknown", why: RegExp) =>
  ({ code: "MCP_ABORTED", reason: "budget", outcome, message: expect.stringMatching(why) });
const toolCallsSeen = (log: Array<{ dir: string; msg: { method?: string } }>) =>
  log.filter((entry) => entry.dir === "in" && entry.msg.method === "tools/call").length;

describe("budgets", () => {
  it("each call takes its request bytes and its response bytes out of the caller's budget", async () => {
    const { client } = startTraced();
    await client.initialize();
    const budget: McpBudget = { requestBytes: 100_000, responseBytes: 100_000 };
    await expect(client.callTool("echo", { value: "abc" }, { budget })).resolves.toEqual({ content: "abc" });
    expect(budget).toEqual({
      requestBytes: 100_000 - bytes({ name: "echo", arguments: { value: "abc" } }),
      responseBytes: 100_000 - bytes({ content: "abc" }),
    });
    const tools = await client.listTools({ budget });
    expect(budget.responseBytes).toBe(100_000 - bytes({ content: "abc" }) - bytes(tools));
  });

  it("a request the budget cannot cover is stopped (reason budget) before anything is written, and costs nothing", async () => {
    const { client, ws } = startTraced();
    await client.initialize();
    const budget: McpBudget = { requestBytes: 50, responseBytes: 10_000 };
    await expect(client.callTool("echo", { value: "x".repeat(100) }, { budget }))
      .rejects.toMatchObject(budgetStop("not-sent", /stopped by the budget: request needs \d+ bytes, 50 left/));
    expect(budget).toEqual({ requestBytes: 50, responseBytes: 10_000 });
    expect(client.metrics).toMatchObject({ requests: 1, stops: { budget: 1 } }); // only initialize was sent
    await client.callTool("echo", { value: "ok" }); // the server is fine and saw no refused call
    expect(toolCallsSeen(ws.log())).toBe(1);
  });

  it("an answer bigger than what is left is dropped (reason budget), and an empty response budget refuses the next call before writing", async () => {
    const { client, ws } = startTraced();
    await client.initialize();
    const budget: McpBudget = { requestBytes: 10_000, responseBytes: 20 };
    await expect(client.callTool("echo", { value: "y".repeat(100) }, { budget }))
      .rejects.toMatchObject(budgetStop("unknown", /response of \d+ bytes is over the 20 bytes left/));
    expect(budget.responseBytes).toBe(0);
    await expect(client.callTool("echo", { value: "z" }, { budget })).rejects.toMatchObject({
      reason: "budget",
      message: expect.stringMatching(/no bytes left in the response budget/),
    });
    expect(toolCallsSeen(ws.log())).toBe(1);
  });

  it("the client's budget applies to every call that brings none; a call refused before sending gives its bytes back", async () => {
    const budget: McpBudget = { requestBytes: 10_000, responseBytes: 10_000 };
    const { client } = startTraced({}, { budget });
    await client.initialize();
    await client.callTool("echo", { value: 1 });
    const after = { ...budget };
    expect(after.requestBytes).toBeLessThan(10_000);
    await expect(client.callTool("echo", { value: 2 }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "user" });
    expect(budget).toEqual(after);
    const own: McpBudget = { requestBytes: 1_000, responseBytes: 1_000 };
    await client.callTool("echo", { value: 3 }, { budget: own });
    expect(budget).toEqual(after);
    expect(own.requestBytes).toBeLessThan(1_000);
  });

  it("a malformed budget is a clear MCP_INVALID_ARGUMENT", async () => {
    expect(() => startTraced({}, { budget: { requestBytes: -1, responseBytes: 1 } })).toThrow(/budget.requestBytes must be a finite number/);
    const { client } = startTraced();
    await client.initialize();
    await expect(client.callTool("echo", { value: 1 }, { budget: { requestBytes: 1 } as never })).rejects.toMatchObject({
      code: "MCP_INVALID_ARGUMENT",
      message: expect.stringMatching(/budget.responseBytes/),
    });
    await expect(client.callTool("echo", { value: 1 }, { budget: null as never })).resolves.toEqual({ content: 1 });
  });
});
