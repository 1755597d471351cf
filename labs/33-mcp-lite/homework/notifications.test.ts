// Homework: server notifications. A notification has no id: it reaches the client's
// onNotification callback and never settles a request.

import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { check, expectCleanShutdown, harness, initialize, within } from "../tests/support.ts";
import { hw } from "./messages.ts";

describe("homework/notifications", () => {
  it("passes progress and log notifications to onNotification without letting them settle a call", async () => {
    const seen: string[] = [];
    const h = harness(
      (command) => new McpClient({ ...command, timeoutMs: 10_000, onNotification: (n: { method: string }) => seen.push(n.method) }),
      { scenarios: ["notifications"] },
    );
    await initialize(h);
    // Each answer is preceded by notifications/progress and notifications/message.
    const first = await within(h.client.callTool("echo", { value: "one" }), "callTool(echo one)");
    check(JSON.stringify(first) === JSON.stringify({ content: "one" }), hw("notificationSettled", { expected: { content: "one" }, actual: first }));
    const second = await within(h.client.callTool("echo", { value: "two" }), "callTool(echo two)");
    check(JSON.stringify(second) === JSON.stringify({ content: "two" }), hw("notificationSettled", { expected: { content: "two" }, actual: second }));
    const expected = ["notifications/progress", "notifications/message", "notifications/progress", "notifications/message"];
    check(JSON.stringify(seen) === JSON.stringify(expected), hw("noNotification", { expected, actual: seen }));
    await expectCleanShutdown(h, hw("whenNotifications"));
  });
});
