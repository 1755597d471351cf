// Rubric probe: 协议 (handshake), protocol faults and framing. A server that breaks the
// protocol (a line that is not a JSON object, not JSON-RPC 2.0, a response with both or
// neither of result/error, a line over maxLineBytes, half a line before it dies, a stray
// "ready" on stdout) makes every pending call reject with MCP_PROTOCOL_ERROR and is
// stopped (so is a line `null`, and an error response whose error is null); nothing escapes
// as an uncaught error that would crash the host. Bad call input
// is refused with MCP_INVALID_ARGUMENT before anything is written.

import { describe, it } from "vitest";
import { check, HANG_MS, initialize, needs, received, settleWithin, waitFor } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { scripted } from "./scripted-server.ts";
import { alivePids, escapedErrors, start } from "./support.ts";

const MAX_LINE_BYTES = 64 * 1024;

/** Each fault scenario of the fixture, and what it does, for the messages. */
export const PROTOCOL_FAULTS = [
  { scenario: "non-object", fault: "the line [1,2,3]" },
  { scenario: "bad-jsonrpc", fault: '"jsonrpc": "1.0"' },
  { scenario: "result-and-error", fault: "a response with both result and error" },
  { scenario: "neither", fault: "a response with neither result nor error" },
  { scenario: "oversized", fault: `a line over maxLineBytes (${MAX_LINE_BYTES} bytes) that never ends` },
  // The server dies mid-line: the exit rule applies as well, so MCP_PROCESS_EXIT is right too;
  // what matters is that the half line settles nothing and crashes nothing.
  { scenario: "half-line-exit", fault: "half a line, then the server exits", also: "MCP_PROCESS_EXIT" },
  { scenario: "stdout-pollution", fault: 'a stray line "ready" on stdout' },
] as const;

describe("rubric/handshake", () => {
  for (const { scenario, fault, also } of PROTOCOL_FAULTS as ReadonlyArray<{ scenario: string; fault: string; also?: string }>) {
    it(`rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on ${scenario}: ${fault}`, async () => {
      // 4 MiB of line for oversized: a client that buffers until a newline never sees one.
      const h = start({ scenarios: [scenario], floodBytes: 4 * 1024 * 1024 }, { maxLineBytes: MAX_LINE_BYTES });
      await initialize(h);
      const escaped = escapedErrors();
      try {
        // "never" is held by the server (or, where the first call is the one that breaks
        // the protocol, is that call); the echo answer is the broken one otherwise.
        const calls = [h.client.callTool("never", {}), h.client.callTool("echo", { value: "trigger" })];
        // The half-line server dies: a client that never rejects on exit hangs here, and
        // that is TODO(exit)'s to fix, not the framing's.
        const settle = () => Promise.all(calls.map((call, i) => settleWithin(call, `pending call #${i + 1}`)));
        const outcomes = also === "MCP_PROCESS_EXIT" ? await needs("exit", settle) : await settle();
        outcomes.forEach((outcome, i) => {
          const label = `pending call #${i + 1}`;
          const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
          const code = outcome.status === "rejected" ? outcome.reason?.code : undefined;
          check(code === "MCP_PROTOCOL_ERROR" || (also !== undefined && code === also), pmsg("faultCode", { label, fault, actual }));
        });
        check(!h.client.initialized, pmsg("initializedAfterFault"));
        // Stopping is the client's doing: SIGTERM ends these servers at once.
        await waitFor(() => alivePids(h).length === 0, "the server stopping", HANG_MS + 2_000).catch(() => {
          throw new Error(pmsg("serverNotStopped", { fault, pids: alivePids(h).join(", ") }));
        });
        check(escaped.errors.length === 0, pmsg("escaped", { when: fault, error: String(escaped.errors[0]) }));
      } finally {
        escaped.stop();
      }
    });
  }

  // JSON that a careless classifier reads a member of: `null` is no object, and an error
  // response whose error is null is no JSON-RPC 2.0 (scripted servers, side by side).
  it("rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on the line null, and on an error response whose error is null", async () => {
    const faults: Array<[string, string]> = [
      ["the line null", "null"],
      ['{"jsonrpc":"2.0","id":N,"error":null}', '{"jsonrpc":"2.0","id":$ID,"error":null}'],
    ];
    const escaped = escapedErrors();
    try {
      await Promise.all(faults.map(async ([fault, line]) => {
        const h = scripted({ "tools/call": { raw: [line] } });
        await initialize(h);
        const outcome = await settleWithin(h.client.callTool("echo", { value: "trigger" }), "callTool(echo)");
        const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
        check(outcome.status === "rejected" && outcome.reason?.code === "MCP_PROTOCOL_ERROR", pmsg("faultCode", { label: "callTool(echo)", fault, actual }));
        check(!h.client.initialized, pmsg("initializedAfterFault"));
        await waitFor(() => alivePids(h).length === 0, "the server stopping", HANG_MS + 2_000).catch(() => {
          throw new Error(pmsg("serverNotStopped", { fault, pids: alivePids(h).join(", ") }));
        });
      }));
      check(escaped.errors.length === 0, pmsg("escaped", { when: faults.map(([fault]) => fault).join(", "), error: String(escaped.errors[0]) }));
    } finally {
      escaped.stop();
    }
  });

  it("refuses a call with bad input with MCP_INVALID_ARGUMENT and writes nothing", async () => {
    const h = start();
    await initialize(h);
    const circular: Record<string, unknown> = { value: "loop" };
    circular.self = circular;
    const bad: Array<[string, () => Promise<unknown>]> = [
      ["callTool(42)", () => h.client.callTool(42 as unknown as string, {})],
      ['callTool("echo", a circular object)', () => h.client.callTool("echo", circular)],
      ['callTool("")', () => h.client.callTool("", {})],
      ['callTool("echo", "text")', () => h.client.callTool("echo", "text" as unknown as Record<string, unknown>)],
      ['callTool("echo", {value}, { timeoutMs: -1 })', () => h.client.callTool("echo", { value: 1 }, { timeoutMs: -1 })],
      ['callTool("echo", {value}, 42)', () => h.client.callTool("echo", { value: 2 }, 42 as never)],
      ['callTool("echo", {value}, { signal: {} })', () => h.client.callTool("echo", { value: 3 }, { signal: {} as AbortSignal })],
    ];
    for (const [label, call] of bad) {
      const outcome = await settleWithin(Promise.resolve().then(call), label);
      const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
      check(outcome.status === "rejected" && outcome.reason?.code === "MCP_INVALID_ARGUMENT", pmsg("invalidInput", { label, actual }));
    }
    // Anything written before this answer is in the server's log by now.
    await settleWithin(h.client.callTool("echo", { value: "sync" }), "callTool(echo)");
    const written = received(h.log(), "tools/call").filter((m) => m.params?.arguments?.value !== "sync");
    check(written.length === 0, pmsg("wroteInvalid", { what: written.map((m) => m.params) }));
  });
});
