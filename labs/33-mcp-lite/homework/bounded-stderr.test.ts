// Homework: bounded stderr. The client always drains the server's stderr but keeps only
// the last maxStderrBytes bytes (counted in bytes, cut on a UTF-8 boundary), says it cut
// something with `truncated`, and attaches the tail to MCP_PROCESS_EXIT.

import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { check, expectCleanShutdown, expectCode, harness, initialize, rejection, waitFor, within } from "../tests/support.ts";
import { hw } from "./messages.ts";

const MAX = 1024;

describe("homework/bounded-stderr", () => {
  it("keeps a UTF-8 safe tail of at most maxStderrBytes, marks it truncated, and attaches it to MCP_PROCESS_EXIT", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000, maxStderrBytes: MAX }));
    await initialize(h);
    // 200 KB of Chinese text (3 bytes a character), so a byte cut lands inside a character.
    const marker = "尾部标记：最后一行\n";
    await within(h.client.callTool("stderr", { text: "错误日志".repeat(17_000) + marker }), "callTool(stderr)");
    // stderr is its own pipe: the answer on stdout can arrive before the last stderr bytes.
    await waitFor(() => h.client.stderr.text.endsWith(marker), "the server's last stderr line in client.stderr");
    const { text, truncated } = h.client.stderr;
    const bytes = Buffer.byteLength(text);
    check(bytes <= MAX, hw("stderrTooBig", { bytes, max: MAX }));
    check(truncated === true, hw("stderrNotTruncated"));
    check(!text.includes("\uFFFD"), hw("stderrBroken"));
    check(text.endsWith(marker), hw("stderrTail", { expected: marker, actual: text.slice(-20) }));

    const last = "致命错误：退出前的最后一句\n";
    const error = await rejection(h.client.callTool("exit", { code: 4, stderr: "噪声".repeat(2_000) + last }), "callTool(exit)");
    expectCode(error, "MCP_PROCESS_EXIT", "callTool(exit)");
    const tail = String(error.stderr ?? "");
    check(
      Buffer.byteLength(tail) <= MAX && tail.endsWith(last) && !tail.includes("\uFFFD"),
      hw("exitStderr", { max: MAX, expected: last, actual: tail.slice(-40) }),
    );
    await expectCleanShutdown(h, "bounded stderr");
  });
});
