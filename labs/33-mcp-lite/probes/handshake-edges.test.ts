// Rubric probe: 协议 (protocol), the sentences the first probes left unguarded: a result is
// resolved exactly as sent even when a multi-byte character is split between two reads, and
// when it says isError; maxLineBytes counts bytes, with its documented default; a failed
// handshake of any kind stops the child; an initialize answer missing any part of
// { protocolVersion, capabilities, serverInfo { name, version } } is refused;
// and after the server died, only initialize() starts a server again.

import { describe, it } from "vitest";
import { check, expectCode, initialize, needs, PENDING_MAP_TODO, received, rejection, settleWithin, startupWithin, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { GOOD_INITIALIZE, scripted } from "./scripted-server.ts";
import { escapedErrors } from "./support.ts";
import { alivePids, start } from "./support-edges.ts";

/** A value of three-byte characters: a cut at any of three consecutive bytes splits one at least twice. */
const WIDE = "中文字符分段".repeat(40);

// Where two strings first differ, shown short: what the learner needs to see, not 600 characters.
function firstDifference(expected: string, actual: string): { expected: string; actual: string } {
  let at = 0;
  while (at < expected.length && expected[at] === actual[at]) at += 1;
  const from = Math.max(0, at - 4);
  return { expected: JSON.stringify(expected.slice(from, at + 6)), actual: JSON.stringify(actual.slice(from, at + 6)) };
}

function codeOf(outcome: unknown): string {
  return (outcome as { code?: string })?.code ?? String(outcome);
}

/** The bytes of the fixture's answer line to an echo call (its newline not counted). */
function echoLineBytes(id: unknown, value: string): number {
  return Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id, result: { content: value } }));
}

// The cap is per line, "largest line accepted": a line of exactly `max` bytes resolves as sent,
// also when it arrives in one read right after another line (release's answer and its head
// share one pipe write; its newline comes only after the next request). Its value is sized
// for the id after the last one the server saw; the id it then really gets decides what to
// expect, so a client whose ids skip is judged by the line it was actually sent.
async function exactCapLine(h: ReturnType<typeof start>, max: number): Promise<void> {
  await within(h.client.callTool("echo", { value: "calibrate" }), "callTool(echo calibrate)");
  const lastId = received(h.log(), "tools/call").at(-1)?.id;
  const value = "x".repeat(max - echoLineBytes(typeof lastId === "number" ? lastId + 1 : 0, ""));
  const call = h.client.callTool("echo", { value, hold: true, cut: max });
  call.catch(() => {}); // a client that refuses the line rejects it while the test awaits release
  await waitFor(() => received(h.log(), "tools/call").some((m) => m.params?.arguments?.value === value), pmsg("lblServerGotHeldEcho"));
  const sentId = received(h.log(), "tools/call").find((m) => m.params?.arguments?.value === value)?.id;
  const bytes = echoLineBytes(sentId, value);
  // An answer handed to the wrong call can leave release or next hanging: id matching's business.
  const around = await needs(PENDING_MAP_TODO, async () => [
    await settleWithin(h.client.callTool("release", {}), "callTool(release)"),
    await settleWithin(h.client.callTool("echo", { value: "next" }), "callTool(echo next)"),
  ]);
  const outcome = await settleWithin(call, pmsg("lblEchoBytes", { bytes }));
  const refused = [...around, outcome].find((o) => o.status === "rejected" && codeOf(o.reason) === "MCP_PROTOCOL_ERROR");
  if (bytes > max) {
    check(refused !== undefined, pmsg("lineCapChars", { bytes, chars: bytes, max, actual: outcome.status }));
    await initialize(h, pmsg("lblInitAfterRefusedLine")); // a fresh server for the rest of the test
    return;
  }
  // A refused line under the cap is this test's failure; anything else going wrong around
  // the held answer is id matching's business.
  check(refused === undefined, pmsg("lineAtCap", { bytes, max, actual: "MCP_PROTOCOL_ERROR" }));
  const got = (outcome.status === "fulfilled" ? outcome.value : undefined) as { content?: unknown; released?: unknown } | undefined;
  const misrouted = around.some((o) => o.status === "rejected") || got?.content === "next" || got?.released !== undefined;
  if (misrouted) {
    const detail = JSON.stringify([...around, outcome].map((o) => (o.status === "fulfilled" ? o.value : codeOf(o.reason))));
    await needs(PENDING_MAP_TODO, async () => check(false, pmsg("wrongAnswer", { label: "callTool(echo held)", expected: pmsg("heldAnswer"), actual: detail })));
  }
  const ok = outcome.status === "fulfilled" && (outcome.value as { content?: unknown })?.content === value;
  check(ok, pmsg("lineAtCap", { bytes, max, actual: outcome.status === "rejected" ? codeOf(outcome.reason) : JSON.stringify(outcome.value).slice(0, 80) }));
}

// True when the client sent two requests with one id (the wire as the fixture logged it).
function reusedIds(log: Array<{ dir: string; msg?: any }>): boolean {
  const seen = new Set<unknown>();
  for (const entry of log) {
    const id = entry.dir === "in" && typeof entry.msg?.method === "string" ? entry.msg.id : undefined;
    if (id === undefined) continue;
    if (seen.has(id)) return true;
    seen.add(id);
  }
  return false;
}

describe("rubric/handshake", () => {
  it("resolves a result exactly as sent when a multi-byte character is split between two reads", async () => {
    const h = start();
    await initialize(h);
    // The server writes the head of the held answer in the same write as release's answer
    // (so the client has read it when release resolves) and the rest only after the next
    // request arrives: the line always reaches the client in two reads. Of three consecutive
    // cut points, at least two fall inside a character.
    for (const cut of [100, 101, 102]) {
      const label = pmsg("lblEchoCut", { cut });
      const call = h.client.callTool("echo", { value: WIDE, hold: true, cut });
      // The answers around the split one are id matching's business.
      await needs(PENDING_MAP_TODO, () => within(h.client.callTool("release", {}), "callTool(release)"));
      await needs(PENDING_MAP_TODO, () => within(h.client.callTool("echo", { value: "next" }), "callTool(echo next)"));
      // A client that numbers every request alike (the starter) never finds the held call's
      // answer: that wait is id matching's business, not the split's.
      const got = (await within(call, label).catch((error) => (reusedIds(h.log()) ? needs(PENDING_MAP_TODO, () => Promise.reject(error)) : Promise.reject(error)))) as { content?: unknown };
      const actual = typeof got?.content === "string" ? got.content : JSON.stringify(got);
      if (actual === "next" || (got as { released?: unknown })?.released !== undefined) {
        await needs(PENDING_MAP_TODO, async () => check(false, pmsg("wrongAnswer", { label, expected: pmsg("heldAnswer"), actual: JSON.stringify(got) })));
      }
      check(actual === WIDE, pmsg("resultChanged", { label, ...firstDifference(WIDE, actual) }));
    }
  });

  it("resolves a tool result with isError: true exactly as sent", async () => {
    const h = start();
    await initialize(h);
    const label = "callTool(echo, isError: true)";
    const outcome = await settleWithin(h.client.callTool("echo", { value: "tool said no", isError: true }), label);
    check(outcome.status === "fulfilled", pmsg("isErrorRejected", { actual: outcome.status === "rejected" ? codeOf(outcome.reason) : "" }));
    const expected = { content: "tool said no", isError: true };
    check(JSON.stringify(outcome.value) === JSON.stringify(expected), pmsg("resultChanged", { label, expected: JSON.stringify(expected), actual: JSON.stringify(outcome.value) }));
  });

  it("counts maxLineBytes in bytes: a line of multi-byte text over the cap in bytes is a protocol fault", async () => {
    const max = 1_000;
    const h = start({}, { maxLineBytes: max });
    await initialize(h);
    await exactCapLine(h, max);
    const value = "中".repeat(400); // 1200 bytes, 400 characters
    const error = await rejection(h.client.callTool("echo", { value }), pmsg("lblEchoBytes", { bytes: 1200 }));
    check(error?.code === "MCP_PROTOCOL_ERROR", pmsg("lineCapChars", { bytes: Buffer.byteLength(value) + 50, chars: value.length + 50, max, actual: codeOf(error) }));
  });

  it("accepts answer lines up to the default maxLineBytes of 1 MiB and refuses longer ones", async () => {
    const h = start();
    await initialize(h);
    const big = "x".repeat(900_000);
    const outcome = await settleWithin(h.client.callTool("echo", { value: big }), "callTool(echo 900 kB)");
    const ok = outcome.status === "fulfilled" && (outcome.value as { content?: unknown })?.content === big;
    check(ok, pmsg("defaultLineCap", { bytes: big.length, actual: outcome.status === "rejected" ? codeOf(outcome.reason) : pmsg("differentValue") }));
    const error = await rejection(h.client.callTool("echo", { value: "y".repeat(1_100_000) }), "callTool(echo 1.1 MB)");
    check(error?.code === "MCP_PROTOCOL_ERROR", pmsg("lineCapChars", { bytes: 1_100_050, chars: 1_100_050, max: 1_048_576, actual: codeOf(error) }));
  });

  it("sends initialize with protocolVersion, capabilities and clientInfo, and refuses an answer without capabilities or serverInfo", async () => {
    const ok = start();
    await initialize(ok);
    const params = received(ok.log(), "initialize")[0]?.params;
    const info = params?.clientInfo;
    const shaped = typeof params?.protocolVersion === "string" && params?.capabilities !== null && typeof params?.capabilities === "object"
      && typeof info?.name === "string" && typeof info?.version === "string";
    check(shaped, pmsg("initializeParams", { params: JSON.stringify(params) }));
    const bad = start({ scenarios: ["bad-initialize"] });
    const outcome = await startupWithin(bad, Promise.resolve().then(() => bad.client.initialize()).then((v) => ({ v }), (e) => ({ e })), pmsg("lblInitNoCapabilities"));
    check("e" in outcome && outcome.e?.code === "MCP_PROTOCOL_ERROR", pmsg("badInitializeAccepted", { actual: "e" in outcome ? codeOf(outcome.e) : "resolved" }));
    check(!bad.client.initialized, pmsg("stillInitialized"));
    // One part missing at a time, from servers that answer as scripted (side by side).
    const { capabilities, protocolVersion } = GOOD_INITIALIZE;
    const answers: Array<[string, unknown]> = [
      ["result: null", null],
      [pmsg("answerNoCapabilities"), { protocolVersion, serverInfo: GOOD_INITIALIZE.serverInfo }],
      [pmsg("answerNoServerInfo"), { protocolVersion, capabilities }],
      ["capabilities: null", { protocolVersion, capabilities: null, serverInfo: GOOD_INITIALIZE.serverInfo }],
      [pmsg("answerNoName"), { protocolVersion, capabilities, serverInfo: { version: "1.0.0" } }],
      [pmsg("answerNoVersion"), { protocolVersion, capabilities, serverInfo: { name: "scripted" } }],
    ];
    await Promise.all(answers.map(async ([what, answer]) => {
      const h = scripted({ initialize: answer });
      const outcome = await startupWithin(h, Promise.resolve().then(() => h.client.initialize()).then((v) => ({ v }), (e) => ({ e })), pmsg("lblInitAnsweredWith", { what }));
      check("e" in outcome && outcome.e?.code === "MCP_PROTOCOL_ERROR", pmsg("initializeShapeAccepted", { answer: JSON.stringify(answer), actual: "e" in outcome ? codeOf(outcome.e) : "resolved" }));
      check(!h.client.initialized, pmsg("stillInitialized"));
    }));
  });

  it("stops the child after a handshake answered with a JSON-RPC error, and after one that timed out", async () => {
    for (const [scenario, why, options] of [
      ["error-initialize", "JSON-RPC error", {}],
      ["hang-initialize", "MCP_TIMEOUT", { timeoutMs: 100 }],
    ] as const) {
      const h = start({ scenarios: [scenario] }, options);
      // While the unanswered handshake runs, calls are refused too (before initialize() succeeded).
      let during: Promise<Array<{ label: string; outcome: { status: string; reason?: any } }>> | undefined;
      const failing = () => {
        const init = Promise.resolve().then(() => h.client.initialize());
        if (scenario === "hang-initialize") during = callsDuringHandshake(h);
        return startupWithin(h, init.then(() => undefined, () => undefined), `initialize() (${why})`);
      };
      // Ending a handshake nobody answers is the deadline's job: TODO(timeout).
      await (scenario === "hang-initialize" ? needs("timeout", failing) : failing());
      check(!h.client.initialized, pmsg("stillInitialized"));
      for (const { label, outcome } of (await during) ?? []) {
        const actual = outcome.status === "fulfilled" ? "resolved" : (outcome.reason?.code ?? String(outcome.reason));
        check(outcome.status === "rejected" && outcome.reason?.code === "MCP_NOT_INITIALIZED", pmsg("notInitializedCode", { label, actual }));
      }
      const early = [...received(h.log(), "tools/call"), ...received(h.log(), "tools/list")];
      check(early.length === 0, pmsg("wroteBeforeInit", { what: early.map((m) => m.method).join(", ") }));
      // An error answer means the server ran (its pid is recorded); a short deadline may stop
      // it before it recorded anything, which is fine too: nothing of it may be alive.
      const answered = scenario === "error-initialize";
      await waitFor(() => (!answered || h.pids().length > 0) && alivePids(h).length === 0, pmsg("lblChildStopping")).catch(() => {
        throw new Error(pmsg("failedHandshakeChild", { why, pids: alivePids(h).join(", ") }));
      });
    }
  });

  it("rejects calls after the server died with MCP_NOT_INITIALIZED and starts nothing until initialize()", async () => {
    const h = start();
    await initialize(h);
    await needs("exit", () => rejection(h.client.callTool("exit", { code: 3 }), "callTool(exit)"));
    for (const [label, call] of [
      ["callTool(echo)", () => h.client.callTool("echo", { value: "after the exit" })],
      ["listTools()", () => h.client.listTools()],
    ] as const) {
      const outcome = await rejection(Promise.resolve().then(call), pmsg("lblAfterServerDied", { call: label })).catch((e: Error) => e);
      const spawned = h.pids().length > 1 || received(h.log(), "initialize").length > 1;
      const what = spawned ? pmsg("serversStarted", { count: h.pids().length }) : codeOf(outcome);
      check(!spawned && outcome?.code === "MCP_NOT_INITIALIZED", pmsg("respawned", { label, what }));
    }
  });

  it("keeps McpError.data of a remote error size-bounded", async () => {
    // The line cap is raised so the 900 kB error line is no fault of framing (that is TODO(framing)).
    const h = start({}, { maxLineBytes: 2 * 1024 * 1024 });
    await initialize(h);
    const sent = 900_000; // far over any sensible bound
    const error = await needs("remote-error", async () => {
      const e = await rejection(h.client.callTool("fail", { data: "d".repeat(sent) }), pmsg("lblFailBigData"));
      expectCode(e, "MCP_ERROR", "callTool(fail)");
      return e;
    });
    const kept = Buffer.byteLength(JSON.stringify(error.data) ?? "");
    check(kept <= 256 * 1024, pmsg("errorDataUnbounded", { sent, kept }));
    // An error without data has none on the McpError either (a stand-in would be data the
    // server never sent).
    const bare = await needs("remote-error", async () => {
      const e = await rejection(h.client.callTool("fail", { noData: true }), pmsg("lblFailNoData"));
      expectCode(e, "MCP_ERROR", "callTool(fail)");
      return e;
    });
    check(bare.data === undefined, pmsg("errorDataInvented", { actual: JSON.stringify(bare.data) ?? String(bare.data) }));
    // Data nested so deep that JSON.stringify overflows the stack (JSON.parse reads it, and it
    // is far under the line cap): sizing it must not throw out of the client's stdout handler.
    const depth = 100_000;
    const escaped = escapedErrors();
    try {
      const label = pmsg("lblFailDeepData", { depth });
      const actual = await settleWithin(h.client.callTool("fail", { nest: depth }), label).then(
        (o) => (o.status === "rejected" ? codeOf(o.reason) : "resolved"),
        (hung: Error) => String(hung?.message ?? hung).split("\n")[0]!,
      );
      check(actual === "MCP_ERROR" && escaped.errors.length === 0, pmsg("errorDataDeep", { depth, actual, escaped: String(escaped.errors[0] ?? "-").slice(0, 200) }));
    } finally {
      escaped.stop();
    }
  });
});

// Once the server received initialize (its answer never comes), callTool() and listTools(), each
// with its outcome; none if the server is not seen reading it in time (nothing is judged then).
async function callsDuringHandshake(h: ReturnType<typeof start>) {
  const seen = await waitFor(() => received(h.log(), "initialize").length > 0, pmsg("lblServerGotInit")).then(() => true, () => false);
  if (!seen) return [];
  const calls = [
    [pmsg("lblWhileInit", { call: "callTool(echo)" }), () => h.client.callTool("echo", { value: "too early" })],
    [pmsg("lblWhileInit", { call: "listTools()" }), () => h.client.listTools()],
  ] as const;
  return Promise.all(calls.map(async ([label, call]) => ({ label, outcome: await settleWithin(Promise.resolve().then(call), label) })));
}
