// Homework: bounded stderr. The client always drains the server's stderr but keeps only
// the last maxStderrBytes bytes (counted in bytes, cut on a UTF-8 boundary), says it cut
// something with `truncated`, and attaches the tail to MCP_PROCESS_EXIT. Read while the
// server is mid-character, the tail ends before that unfinished character.

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

// Raw stderr writes that end partway into a character (the server is mid-character when the
// client reads): each must show without its unfinished end, and with it once the rest arrived.
// One write each, far under the pipe's atomic size, so its ASCII marker and its last bytes reach
// the client in the same read. `ends`: what the tail ends with then; a marker never repeats.
const MID_CHARACTER = [
  { hex: "3c75313e" + "e4b8", ends: "<u1>" }, // 中 = e4 b8 ad: 2 of 3 bytes
  { hex: "ad" + "3c75323e" + "f09f98", ends: "中<u2>" }, // 😀 = f0 9f 98 80: 3 of 4
  { hex: "80" + "3c75333e" + "f0", ends: "😀<u3>" }, // 1 of 4
  { hex: "9f9880" + "3c75343e" + "c3", ends: "😀<u4>" }, // é = c3 a9: 1 of 2
  { hex: "a9" + "3c75353e" + "e4", ends: "é<u5>" }, // 1 of 3
  { hex: "b8ad" + "3c75363e" + "f09f", ends: "中<u6>" }, // 2 of 4
  { hex: "9880" + "3c75373e" + "e4b8ad", ends: "😀<u7>中" }, // whole characters at the end
  { hex: "3c75383e" + "c3a9", ends: "<u8>é" },
  { hex: "3c75393e" + "f09f9880", ends: "<u9>😀" },
];

async function midCharacterSteps(client: McpClient): Promise<void> {
  for (const [index, { hex, ends }] of MID_CHARACTER.entries()) {
    const marker = `<u${index + 1}>`;
    await within(client.callTool("stderr", { hex }), `callTool(stderr ${marker})`);
    await waitFor(() => client.stderr.text.includes(marker), hw("lblMarkerInStderr", { marker }));
    const kept = client.stderr.text;
    const markerHex = Buffer.from(marker).toString("hex");
    const after = hex.slice(hex.indexOf(markerHex) + markerHex.length).match(/../g) ?? [];
    const written = `…${marker} ${after.map((byte) => `0x${byte}`).join(" ")}`;
    check(kept.endsWith(ends) && !kept.includes("\uFFFD"), hw("stderrMidCharacter", { written, expected: JSON.stringify(ends), actual: JSON.stringify(kept.slice(-8)) }));
  }
}

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
      await waitFor(() => h.client.stderr.text.endsWith(marker), hw("lblLastStderrLine"));
      const { text: kept, truncated } = h.client.stderr;
      const bytes = Buffer.byteLength(kept);
      check(bytes <= MAX, hw("stderrTooBig", { bytes, max: MAX }));
      check(truncated === true, hw("stderrNotTruncated"));
      check(!kept.includes("\uFFFD"), hw("stderrBroken"));
      const expected = expectedTail(text);
      check(kept === expected, hw("stderrTail", { expected: hw("tailBytes", { bytes: Buffer.byteLength(expected), tail: expected.slice(-12) }), actual: hw("tailBytes", { bytes, tail: kept.slice(-12) }) }));
    }

    await midCharacterSteps(h.client);

    const last = "致命错误：退出前的最后一句\n";
    const dying = "噪声".repeat(2_000) + "x" + last; // one ASCII byte: the cut lands mid-character
    const error = await rejection(h.client.callTool("exit", { code: 4, stderr: dying }), "callTool(exit)");
    expectCode(error, "MCP_PROCESS_EXIT", "callTool(exit)");
    const tail = String(error.stderr ?? "");
    check(
      Buffer.byteLength(tail) <= MAX && tail.endsWith(last) && !tail.includes("\uFFFD"),
      hw("exitStderr", { max: MAX, expected: last, actual: tail.slice(-40) }),
    );
    await expectCleanShutdown(h, hw("whenBoundedStderr"));
  });

  it("keeps the last 64 KiB of stderr when maxStderrBytes is not set", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000 }));
    await initialize(h);
    const marker = "default-cap-end\n";
    await within(h.client.callTool("stderr", { text: "d".repeat(100_000) + marker }), "callTool(stderr)");
    await waitFor(() => h.client.stderr.text.endsWith(marker), hw("lblLastStderrLine"));
    const { text: kept, truncated } = h.client.stderr;
    const bytes = Buffer.byteLength(kept);
    check(bytes === 64 * 1024 && truncated === true, hw("stderrDefault", { bytes, truncated: String(truncated) }));
    await expectCleanShutdown(h, hw("whenDefaultStderrCap"));
  });
});
