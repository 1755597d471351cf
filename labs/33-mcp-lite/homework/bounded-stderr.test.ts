// Homework: bounded stderr. The client always drains the server's stderr but keeps only
// the last maxStderrBytes bytes (counted in bytes, cut on a UTF-8 boundary), says it cut
// something with `truncated`, and attaches the tail to MCP_PROCESS_EXIT.

import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { check, expectCleanShutdown, expectCode, harness, initialize, rejection, waitFor, within } from "../tests/support.ts";
import { hw } from "./messages.ts";

const MAX = 1024;

// The tail a correct client keeps of `text`: its last MAX bytes, minus the continuation
// bytes of a character the cut went through.
function expectedTail(text: string): string {
  const bytes = Buffer.from(text);
  let start = Math.max(0, bytes.length - MAX);
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start += 1;
  return bytes.toString("utf8", start);
}

// Large writes whose last MAX bytes begin 1 and 2 bytes into a 3-byte character and 1 to 3
// bytes into a 4-byte one, so a plain byte cut always splits a character.
const WRITES = [
  { filler: "错误日志", marker: "尾部A：最后一行\n" },
  { filler: "错误日志", marker: "尾部BB：最后一行\n" },
  { filler: "😀", marker: "tail-c\n" },
  { filler: "😀", marker: "tail-dddd\n" },
  { filler: "😀", marker: "tail-eee\n" },
];

describe("homework/bounded-stderr", () => {
  it("keeps a UTF-8 safe tail of at most maxStderrBytes, marks it truncated, and attaches it to MCP_PROCESS_EXIT", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000, maxStderrBytes: MAX }));
    await initialize(h);
    for (const { filler, marker } of WRITES) {
      const text = filler.repeat(60_000 / Buffer.byteLength(filler)) + marker;
      const width = Buffer.byteLength([...filler][0]!);
      check((MAX - Buffer.byteLength(marker)) % width !== 0, "the test's own text must make a byte cut split a character");
      await within(h.client.callTool("stderr", { text }), "callTool(stderr)");
      // stderr is its own pipe: the answer on stdout can arrive before the last stderr bytes.
      await waitFor(() => h.client.stderr.text.endsWith(marker), "the server's last stderr line in client.stderr");
      const { text: kept, truncated } = h.client.stderr;
      const bytes = Buffer.byteLength(kept);
      check(bytes <= MAX, hw("stderrTooBig", { bytes, max: MAX }));
      check(truncated === true, hw("stderrNotTruncated"));
      check(!kept.includes("\uFFFD"), hw("stderrBroken"));
      const expected = expectedTail(text);
      check(kept === expected, hw("stderrTail", { expected: `${Buffer.byteLength(expected)} bytes …${expected.slice(-12)}`, actual: `${bytes} bytes …${kept.slice(-12)}` }));
    }

    const last = "致命错误：退出前的最后一句\n";
    const dying = "噪声".repeat(2_000) + "x" + last; // one ASCII byte: the cut lands mid-character
    const error = await rejection(h.client.callTool("exit", { code: 4, stderr: dying }), "callTool(exit)");
    expectCode(error, "MCP_PROCESS_EXIT", "callTool(exit)");
    const tail = String(error.stderr ?? "");
    check(
      Buffer.byteLength(tail) <= MAX && tail.endsWith(last) && !tail.includes("\uFFFD"),
      hw("exitStderr", { max: MAX, expected: last, actual: tail.slice(-40) }),
    );
    await expectCleanShutdown(h, "bounded stderr");
  });

  it("keeps the last 64 KiB of stderr when maxStderrBytes is not set", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000 }));
    await initialize(h);
    const marker = "default-cap-end\n";
    await within(h.client.callTool("stderr", { text: "d".repeat(100_000) + marker }), "callTool(stderr)");
    await waitFor(() => h.client.stderr.text.endsWith(marker), "the server's last stderr line in client.stderr");
    const { text: kept, truncated } = h.client.stderr;
    const bytes = Buffer.byteLength(kept);
    check(bytes === 64 * 1024 && truncated === true, hw("stderrDefault", { bytes, truncated: String(truncated) }));
    await expectCleanShutdown(h, "default stderr cap");
  });
});
