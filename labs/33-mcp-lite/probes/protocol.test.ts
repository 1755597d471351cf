// Rubric probe: 协议 (handshake), protocol faults and framing. A server that breaks the
// protocol (a line that is not a JSON object, not JSON-RPC 2.0, a response with both or
// neither of result/error, a line over maxLineBytes, half a line before it dies, a stray
// "ready" on stdout) makes every pending call reject with MCP_PROTOCOL_ERROR and is
// stopped (so is a line `null`, and an error response whose error is null); nothing escapes
// as an uncaught error that would crash the host. Bad call input
// is refused with MCP_INVALID_ARGUMENT before anything is written.

import { describe, it } from "vitest";
import { check, expectCode, HANG_MS, initialize, needs, received, rejection, settleWithin, waitFor } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { scripted } from "./scripted-server.ts";
import { alivePids, escapedErrors, start } from "./support.ts";
import { describeOutcome, unsettled } from "./support-edges.ts";

const MAX_LINE_BYTES = 64 * 1024;

/** Each fault scenario of the fixture, and what it does: `fault` for the test's title (English, an identifier), `text` for the messages (the learner's language). */
export const PROTOCOL_FAULTS = [
  { scenario: "non-object", fault: "the line [1,2,3]", text: pmsg("faultNonObject") },
  { scenario: "bad-jsonrpc", fault: '"jsonrpc": "1.0"', text: '"jsonrpc": "1.0"' },
  { scenario: "result-and-error", fault: "a response with both result and error", text: pmsg("faultBoth") },
  { scenario: "neither", fault: "a response with neither result nor error", text: pmsg("faultNeither") },
  { scenario: "oversized", fault: `a line over maxLineBytes (${MAX_LINE_BYTES} bytes) that never ends`, text: pmsg("faultOversized", { max: MAX_LINE_BYTES }) },
  // The server dies mid-line: the exit rule applies as well, so MCP_PROCESS_EXIT is right too;
  // what matters is that the half line settles nothing and crashes nothing.
  { scenario: "half-line-exit", fault: "half a line, then the server exits", text: pmsg("faultHalfLine"), also: "MCP_PROCESS_EXIT" },
  { scenario: "stdout-pollution", fault: 'a stray line "ready" on stdout', text: pmsg("faultStray") },
] as const;

describe("rubric/handshake", () => {
  for (const { scenario, fault, text, also } of PROTOCOL_FAULTS as ReadonlyArray<{ scenario: string; fault: string; text: string; also?: string }>) {
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
        const settle = () => Promise.all(calls.map((call, i) => settleWithin(call, pmsg("lblPendingCall", { n: i + 1 }))));
        const outcomes = also === "MCP_PROCESS_EXIT" ? await needs("exit", settle) : await settle();
        outcomes.forEach((outcome, i) => {
          const label = pmsg("lblPendingCall", { n: i + 1 });
          const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
          const code = outcome.status === "rejected" ? outcome.reason?.code : undefined;
          check(code === "MCP_PROTOCOL_ERROR" || (also !== undefined && code === also), pmsg("faultCode", { label, fault: text, actual }));
        });
        check(!h.client.initialized, pmsg("initializedAfterFault"));
        // Stopping is the client's doing: SIGTERM ends these servers at once.
        await waitFor(() => alivePids(h).length === 0, pmsg("lblServerStopping"), HANG_MS + 2_000).catch(() => {
          throw new Error(pmsg("serverNotStopped", { fault: text, pids: alivePids(h).join(", ") }));
        });
        check(escaped.errors.length === 0, pmsg("escaped", { when: text, error: String(escaped.errors[0]) }));
      } finally {
        escaped.stop();
      }
    });
  }

  // JSON that a careless classifier reads a member of: `null` is no object, a batch (an
  // array) is no message here, `jsonrpc` is the string "2.0" or the line is no JSON-RPC 2.0
  // (a notification's too), and an error's code is an integer and its message a string
  // (scripted servers, side by side).
  it("rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on lines that are no JSON-RPC 2.0 message: null, a batch, a bad or missing jsonrpc, a bad error", async () => {
    const faults: Array<[string, string]> = [
      [pmsg("faultLineNull"), "null"],
      ['{"jsonrpc":"2.0","id":N,"error":null}', '{"jsonrpc":"2.0","id":$ID,"error":null}'],
      [pmsg("faultBatch", { line: '[{"jsonrpc":"2.0","id":N,"result":{}}]' }), '[{"jsonrpc":"2.0","id":$ID,"result":{}}]'],
      [pmsg("faultNumber", { line: '{"jsonrpc":2,"id":N,"result":{}}' }), '{"jsonrpc":2,"id":$ID,"result":{}}'],
      [pmsg("faultNoJsonrpc", { line: '{"id":N,"result":{}}' }), '{"id":$ID,"result":{}}'],
      [pmsg("faultNotification", { line: '{"jsonrpc":"1.0","method":"notifications/message"}' }), '{"jsonrpc":"1.0","method":"notifications/message","params":{}}'],
      ['{"jsonrpc":"2.0","id":N,"error":{"code":1.5,"message":"x"}}', '{"jsonrpc":"2.0","id":$ID,"error":{"code":1.5,"message":"x"}}'],
      [pmsg("faultNoMessage", { line: '{"jsonrpc":"2.0","id":N,"error":{"code":-32000}}' }), '{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000}}'],
    ];
    const escaped = escapedErrors();
    try {
      await Promise.all(faults.map(async ([fault, line]) => {
        const h = scripted({ "tools/call": { raw: [line] } });
        await initialize(h);
        // (A call the fault never settles is a wrong outcome too: the hang is its message.)
        const outcome = await settleWithin(h.client.callTool("echo", { value: "trigger" }), "callTool(echo)").catch(unsettled);
        const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
        check(outcome.status === "rejected" && outcome.reason?.code === "MCP_PROTOCOL_ERROR", pmsg("faultCode", { label: "callTool(echo)", fault, actual }));
        check(!h.client.initialized, pmsg("initializedAfterFault"));
        await waitFor(() => alivePids(h).length === 0, pmsg("lblServerStopping"), HANG_MS + 2_000).catch(() => {
          throw new Error(pmsg("serverNotStopped", { fault, pids: alivePids(h).join(", ") }));
        });
      }));
      check(escaped.errors.length === 0, pmsg("escaped", { when: faults.map(([fault]) => fault).join(", "), error: String(escaped.errors[0]) }));
    } finally {
      escaped.stop();
    }
  });

  // Valid answers of shapes a careless reader mistakes: a result of null is a result, an
  // error's data of 0 or null is its data, and an error whose id is null answers no request
  // (it settles nothing; the call's own answer comes after it).
  it("resolves a result of null as sent, keeps an error's data of 0 and of null and its code 0, and settles nothing with an error whose id is null or unknown", async () => {
    const line = (answer: string) => ({ raw: [answer] });
    const h = scripted({
      "tools/call:null-result": line('{"jsonrpc":"2.0","id":$ID,"result":null}'),
      "tools/call:data-zero": line('{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000,"message":"zero","data":0}}'),
      "tools/call:data-null": line('{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000,"message":"none","data":null}}'),
      "tools/call:id-null": { raw: ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}', '{"jsonrpc":"2.0","id":$ID,"result":{"content":"after"}}'] },
      // An error for an id the client never used (a request it knows nothing of) is no fault either.
      "tools/call:id-unknown": { raw: ['{"jsonrpc":"2.0","id":9999,"error":{"code":-32000,"message":"stray"}}', '{"jsonrpc":"2.0","id":$ID,"result":{"content":"after"}}'] },
      "tools/call:code-zero": line('{"jsonrpc":"2.0","id":$ID,"error":{"code":0,"message":"zero code"}}'),
    });
    await initialize(h);
    const describe = (o: Awaited<ReturnType<typeof settleWithin>>) => (o.status === "fulfilled" ? `resolved ${JSON.stringify(o.value)}` : pmsg("codeWithData", { code: o.reason?.code ?? String(o.reason), data: JSON.stringify(o.reason?.data) ?? pmsg("absent") }));
    const results: Array<[string, string, string, (o: Awaited<ReturnType<typeof settleWithin>>) => boolean]> = [
      ["null-result", '{"result":null}', "resolve null", (o) => o.status === "fulfilled" && o.value === null],
      ["id-null", pmsg("sentThenAnswer", { first: '{"id":null,"error":{…}}', answer: '{"content":"after"}' }), 'resolve {"content":"after"}', (o) => o.status === "fulfilled" && JSON.stringify(o.value) === '{"content":"after"}'],
      ["id-unknown", pmsg("sentThenAnswer", { first: '{"id":9999,"error":{…}}', answer: '{"content":"after"}' }), 'resolve {"content":"after"}', (o) => o.status === "fulfilled" && JSON.stringify(o.value) === '{"content":"after"}'],
    ];
    for (const [tool, sent, expected, ok] of results) {
      const label = `callTool("${tool}")`;
      const outcome = await settleWithin(h.client.callTool(tool, {}), label);
      check(ok(outcome), pmsg("oddAnswer", { label, line: sent, expected, actual: describe(outcome) }));
    }
    // The error answers: that one rejects MCP_ERROR at all is TODO(remote-error)'s first step.
    for (const [tool, sent, data] of [["data-zero", '{"error":{"code":-32000,"message":"zero","data":0}}', 0], ["data-null", '{"error":{"code":-32000,"message":"none","data":null}}', null]] as const) {
      const label = `callTool("${tool}")`;
      const error = await needs("remote-error", async () => {
        const e = await rejection(h.client.callTool(tool, {}), label);
        expectCode(e, "MCP_ERROR", label);
        return e;
      });
      check(error.data === data, pmsg("oddAnswer", { label, line: sent, expected: pmsg("rejectWithData", { data: JSON.stringify(data) }), actual: describe({ status: "rejected", reason: error }) }));
    }
    // An error code of 0 is a code: remoteCode keeps it.
    const zero = await needs("remote-error", async () => {
      const e = await rejection(h.client.callTool("code-zero", {}), 'callTool("code-zero")');
      expectCode(e, "MCP_ERROR", 'callTool("code-zero")');
      return e;
    });
    check(zero.remoteCode === 0, pmsg("oddAnswer", { label: 'callTool("code-zero")', line: '{"error":{"code":0,"message":"zero code"}}', expected: pmsg("rejectWithCode", { code: 0 }), actual: `remoteCode ${JSON.stringify(zero.remoteCode) ?? pmsg("absent")}` }));
  });

  // After the answer that settled the last call, the server writes a line that is no JSON:
  // a protocol fault even with nothing pending (there is nothing to reject, but the server
  // is broken all the same), so the server is stopped and the client is no longer initialized.
  it("stops the server on a line that is no JSON-RPC message while no call is pending", async () => {
    const h = scripted({ "tools/call:then-garbage": { raw: ['{"jsonrpc":"2.0","id":$ID,"result":{"content":"ok"}}', "ready"] } });
    await initialize(h);
    const escaped = escapedErrors();
    try {
      const outcome = await settleWithin(h.client.callTool("then-garbage", {}), 'callTool("then-garbage")');
      check(outcome.status === "fulfilled" && JSON.stringify(outcome.value) === '{"content":"ok"}', pmsg("oddAnswer", { label: 'callTool("then-garbage")', line: '{"result":{"content":"ok"}}', expected: 'resolve {"content":"ok"}', actual: describeOutcome(outcome) }));
      await waitFor(() => alivePids(h).length === 0, pmsg("lblServerStopping"), HANG_MS + 2_000).catch(() => {
        throw new Error(pmsg("serverNotStoppedIdle", { pids: alivePids(h).join(", ") }));
      });
      check(!h.client.initialized, pmsg("initializedAfterFault"));
      check(escaped.errors.length === 0, pmsg("escaped", { when: pmsg("faultIdle"), error: String(escaped.errors[0]) }));
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
      [pmsg("lblCircular"), () => h.client.callTool("echo", circular)],
      ['callTool("")', () => h.client.callTool("", {})],
      ['callTool("echo", "text")', () => h.client.callTool("echo", "text" as unknown as Record<string, unknown>)],
      ['callTool("echo", {value}, { timeoutMs: -1 })', () => h.client.callTool("echo", { value: 1 }, { timeoutMs: -1 })],
      ['callTool("echo", {value}, 42)', () => h.client.callTool("echo", { value: 2 }, 42 as never)],
      ['callTool("echo", {value}, { signal: {} })', () => h.client.callTool("echo", { value: 3 }, { signal: {} as AbortSignal })],
      ['callTool("echo", [1, 2])', () => h.client.callTool("echo", [1, 2] as unknown as Record<string, unknown>)],
      ['callTool("echo", {value}, { timeoutMs: 0 })', () => h.client.callTool("echo", { value: 4 }, { timeoutMs: 0 })],
      ["listTools({ timeoutMs: -1 })", () => h.client.listTools({ timeoutMs: -1 })],
    ];
    const listed = received(h.log(), "tools/list").length;
    for (const [label, call] of bad) {
      const outcome = await settleWithin(Promise.resolve().then(call), label);
      const actual = outcome.status === "fulfilled" ? `resolved ${JSON.stringify(outcome.value)}` : (outcome.reason?.code ?? String(outcome.reason));
      check(outcome.status === "rejected" && outcome.reason?.code === "MCP_INVALID_ARGUMENT", pmsg("invalidInput", { label, actual }));
    }
    // Anything written before this answer is in the server's log by now.
    await settleWithin(h.client.callTool("echo", { value: "sync" }), "callTool(echo)");
    const written = received(h.log(), "tools/call").filter((m) => m.params?.arguments?.value !== "sync");
    check(written.length === 0, pmsg("wroteInvalid", { what: written.map((m) => m.params) }));
    const lists = received(h.log(), "tools/list").slice(listed);
    check(lists.length === 0, pmsg("wroteInvalid", { what: lists.map((m) => ({ method: "tools/list", params: m.params })) }));
  });
});
