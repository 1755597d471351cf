// Rubric probe: 生命周期 (lifecycle), the sentences the first probes left unguarded: every way
// a request ends frees its maxPending slot; a call queued behind a full stdin still times
// out; a server that exits during the handshake fails it at once; the old server's exit
// cannot touch the server a new initialize() started; close() rejects what is pending before
// the server is gone, and calls made while it runs are refused with CLIENT_CLOSED; a
// pre-aborted signal is honoured by every method that takes one.

import { existsSync } from "node:fs";
import { describe, it } from "vitest";
import { check, clientTimerDelays, expectCode, initialize, needs, received, rejection, settleWithin, SPARE_TIMEOUT_MS, startupWithin, timerSnapshot, waitFor, within, type Settled } from "../tests/support.ts";
import { startedCount, startedCountAfterTurn } from "../host/client-side.ts";
import { noted } from "../tests/messages.ts";
import { pmsg } from "./messages.ts";
import { describeOutcome, killServer, serverGone, settled, start, unsettled } from "./support-edges.ts";
import { isAlive } from "../../../fixtures/index.ts";
import { scripted } from "./scripted-server.ts";

// Every call is refused with CLIENT_CLOSED: close() is for good.
async function expectRefused(h: ReturnType<typeof start>, when: string): Promise<void> {
  for (const [label, call] of [
    ["callTool(echo)", () => h.client.callTool("echo", { value: when })],
    ["listTools()", () => h.client.listTools()],
    ["initialize()", () => h.client.initialize()],
  ] as const) {
    const outcome = await settleWithin(Promise.resolve().then(call), pmsg("lblCallWhen", { call: label, when }));
    check(outcome.status === "rejected" && outcome.reason?.code === "CLIENT_CLOSED", pmsg("refusedForGood", { label, when, actual: describeOutcome(outcome) }));
  }
}

describe("rubric/lifecycle", () => {
  it("frees the maxPending slot of every call that timed out", async () => {
    const max = 2;
    const h = start({}, { maxPending: max });
    await initialize(h);
    // The calls must time out first: that is TODO(timeout)'s; freeing their slots is this test's.
    await needs("timeout", async () => {
      for (let i = 0; i < max; i++) {
        expectCode(await rejection(h.client.callTool("never", { n: i }, { timeoutMs: 50 }), `callTool(never #${i + 1}, 50 ms)`), "MCP_TIMEOUT", `callTool(never #${i + 1})`);
      }
    });
    const outcome = await settleWithin(Promise.resolve().then(() => h.client.callTool("echo", { value: "room again" })), pmsg("lblAfterTimeouts"));
    check(outcome.status === "fulfilled", pmsg("busyAfterTimeouts", { max, count: max, actual: describeOutcome(outcome) }));
  });

  it("times out a call queued behind a server that stopped reading its stdin", async () => {
    const h = start();
    await initialize(h);
    await within(h.client.callTool("stall", {}), "callTool(stall)");
    // Each call is bigger than the pipe: the first fills it, the others wait in the client.
    // "never" is held, never answered: once the server reads again, no 200 kB answer comes
    // back (which a client with a smaller line cap would rightly refuse), and the only call
    // still pending is the live one below, whatever the id matching does.
    const big = "z".repeat(200_000);
    const calls = [1, 2, 3].map((n) => h.client.callTool("never", { value: big, n }, { timeoutMs: 100 }));
    // Queued with them, on the default deadline: the others' endings must not drop it.
    const live = settled(h.client.callTool("echo", { value: "still wanted", n: 4 }));
    const outcomes = await Promise.all(calls.map((call, i) => settleWithin(call, pmsg("lblQueuedCall", { n: i + 1 }))));
    outcomes.forEach((outcome, i) => {
      const ok = outcome.status === "rejected" && outcome.reason?.code === "MCP_TIMEOUT";
      check(ok, pmsg("queuedNoTimeout", { label: pmsg("lblCallN", { n: i + 1 }), actual: describeOutcome(outcome) }));
    });
    for (const pid of h.pids().filter(isAlive)) process.kill(pid, "SIGUSR2"); // the server reads again
    const after = await settleWithin(live, pmsg("lblLiveQueued"));
    const delivered = after.status === "fulfilled" && after.value.status === "fulfilled" && (after.value.value as { content?: unknown })?.content === "still wanted";
    check(delivered, pmsg("queuedDropped", { actual: after.status === "fulfilled" ? describeOutcome(after.value) : "" }));
    check(h.client.pendingCount === 0, pmsg("pendingLeft", { when: "MCP_TIMEOUT", count: h.client.pendingCount }));
  });

  it("keeps the new server's state when the old one exits after a new initialize()", async () => {
    // The client's own SIGKILL never comes within the probe (closeTimeoutMs: a minute), and the
    // faulted server ignores SIGTERM and stdin's end: only the probe ends it, so its exit comes
    // where the probe puts it, whatever the load.
    const h = start({}, { closeTimeoutMs: 60_000 });
    await initialize(h);
    const oldPid = h.client.pid;
    const faulted = await settleWithin(h.client.callTool("echo", { value: "garbled", garble: true, slowExitMs: 60_000, lingerOnStdinEnd: true }), pmsg("lblGarbled"));
    // Stopping a server that broke protocol is TODO(remote-error)'s work: a client that has not
    // taken the fault in is told so, whatever goes wrong after.
    const tookFault = faulted.status === "rejected" && faulted.reason?.code === "MCP_PROTOCOL_ERROR";
    const afterFault = async () => {
      const startedBefore = startedCount();
      const restarting = settled(new Promise((resolve) => resolve(h.client.initialize())));
      // A client that waits for the old server (as it must) starts nothing until the old server's
      // exit: the probe then ends the old server. One that does not wait starts the next server
      // at once, in the turn initialize() was called (or just after, behind an await of
      // something already settled): the probe lets its handshake finish first. Counted once the
      // client is done with that turn, so no stopwatch decides which client is which.
      const waited = (await startedCountAfterTurn()) === startedBefore;
      if (waited) killServer(oldPid);
      const restarted = await startupWithin(h, restarting, pmsg("lblInitAfterFault"));
      check(restarted.status === "fulfilled", pmsg("staleExit", { what: `initialize() ${describeOutcome(restarted)}` }));
      if (!waited) killServer(oldPid);
      // The client has seen the old server's exit once it reaped the process, and taken it in
      // once initialized changed or nothing moves any more.
      await waitFor(() => oldPid === undefined || !existsSync(`/proc/${oldPid}`), pmsg("lblReapingOld"));
      if (!waited) await waitFor(() => !h.client.initialized, pmsg("lblOldExitSeen")).catch(() => {});
      const fresh = await settleWithin(h.client.callTool("echo", { value: "fresh" }), pmsg("lblOnNewServer"));
      check(h.client.initialized, pmsg("staleExit", { what: pmsg("initializedFalse") }));
      check(fresh.status === "fulfilled", pmsg("staleExit", { what: `callTool(echo) ${describeOutcome(fresh)}` }));
    };
    await (tookFault ? afterFault() : needs("remote-error", afterFault));
  });

  it("rejects pending calls with CLIENT_CLOSED as soon as close() is called, before the server is gone", async () => {
    // The server ignores SIGTERM and stdin's end and the grace is a minute: it stays until the probe ends it.
    const h = start({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs: 60_000 });
    await initialize(h);
    let outcome: Settled<unknown> | undefined;
    const held = settled(h.client.callTool("never", { value: "pending at close()" })).then((o) => (outcome = o));
    await waitFor(() => received(h.log(), "tools/call").length === 1, pmsg("lblServerGotNeverCall"));
    const closing = settled(Promise.resolve().then(() => h.client.close()));
    await waitFor(() => outcome !== undefined, pmsg("lblPendingEnded")).catch(() => {});
    const early = outcome !== undefined;
    for (const pid of h.pids()) killServer(pid);
    // (A call still pending is this test's finding already: close() and the call are left to
    // the harness's bounded cleanup, not waited for here.)
    if (early) {
      await within(closing, "close()", 10_000);
      await held;
    }
    const ok = early && outcome?.status === "rejected" && outcome.reason?.code === "CLIENT_CLOSED";
    check(ok, pmsg("closeRejectsLate", { actual: early ? describeOutcome(outcome!) : pmsg("stillPending") }));
  });

  it("refuses every call made while close() runs with CLIENT_CLOSED and starts nothing", async () => {
    const h = start({ scenarios: ["slow-exit"], sigtermDelayMs: 300 });
    await initialize(h);
    const before = h.pids().length;
    const closing = h.client.close();
    for (const [label, call] of [
      ["callTool(echo)", () => h.client.callTool("echo", { value: "during close" })],
      ["listTools()", () => h.client.listTools()],
      ["initialize()", () => h.client.initialize()],
    ] as const) {
      const outcome = await settleWithin(Promise.resolve().then(call), pmsg("lblDuringClose", { call: label }));
      check(outcome.status === "rejected" && outcome.reason?.code === "CLIENT_CLOSED", pmsg("duringClose", { label, actual: describeOutcome(outcome) }));
    }
    await within(closing, "close()", 10_000);
    check(h.pids().length === before, pmsg("startedDuringClose", { what: h.pids().slice(before).join(", ") }));
    // And for good: once close() resolved, and while a close() that ended a handshake (the
    // server still stopping) runs.
    await expectRefused(h, pmsg("whenAfterClose"));
    const g = start({ scenarios: ["hang-initialize", "slow-exit"], sigtermDelayMs: 150 });
    const init = settled(g.client.initialize());
    await waitFor(() => received(g.log(), "initialize").length === 1, pmsg("lblServerGotInit"));
    const closingG = g.client.close();
    // One turn: the handshake has heard of close(); the server takes 150 ms to stop.
    await new Promise((resolve) => setImmediate(resolve));
    await expectRefused(g, pmsg("whenClosingHandshake"));
    await within(closingG, "close()", 10_000);
    await settleWithin(init, pmsg("lblInitEndedByClose"));
    check(g.pids().length === 1, pmsg("startedDuringClose", { what: g.pids().slice(1).join(", ") }));
  });

  // listTools() honours the timeoutMs it is given, as callTool() does (a server that never
  // answers tools/list; the client's own deadline is 10 s).
  it("times out listTools() at the timeoutMs it is given", async () => {
    const s = scripted({ "tools/list": { raw: [] } });
    await initialize(s);
    const list = noted("listTools({ timeoutMs: 100 })", pmsg("noteToolsListNever", { ms: SPARE_TIMEOUT_MS }));
    const listed = await settleWithin(s.client.listTools({ timeoutMs: 100 }), list).catch(unsettled);
    check(listed.status === "rejected" && listed.reason?.code === "MCP_TIMEOUT", pmsg("defaultDeadline", { label: list, actual: describeOutcome(listed) }));
  });

  // Which deadline a call gets: the client's timeoutMs when the call has none of its own (not
  // the contract's default of 30 s), and the call's own when it has one, even longer than the
  // client's. Read from the delay of the timers the client made for the call, not waited for:
  // initialize() has the client's deadline too, and one short enough to wait for would race
  // the server's start on a loaded machine. A client that keeps its deadlines some other way
  // (one timer for the earliest, a sweep) makes no timer of the wrong delay and is not judged.
  it("gives a call the client's timeoutMs when it has none of its own, and its own when it has one", async () => {
    const CONTRACT_DEFAULT_TIMEOUT_MS = 30_000; // CONTRACT §1: timeoutMs, default 30_000
    const clientMs = 43_000;
    for (const [own, expected, wrong] of [[undefined, clientMs, CONTRACT_DEFAULT_TIMEOUT_MS], [47_000, 47_000, clientMs]] as const) {
      // A fresh client each time: its only deadline is the one this call got.
      const h = start({}, { timeoutMs: clientMs });
      await initialize(h);
      const before = timerSnapshot();
      const label = own === undefined ? `callTool(never) // new McpClient({ timeoutMs: ${clientMs} })` : `callTool(never, {}, { timeoutMs: ${own} }) // new McpClient({ timeoutMs: ${clientMs} })`;
      void settled(h.client.callTool("never", {}, own === undefined ? undefined : { timeoutMs: own }));
      await waitFor(() => received(h.log(), "tools/call").length === 1, pmsg("lblServerGotNeverCall"));
      const delays = clientTimerDelays(before);
      check(!(delays.includes(wrong) && !delays.includes(expected)), pmsg("callDeadline", { label, expected, actual: wrong }));
    }
  });

  it("takes 256 calls in flight by default (maxPending) and refuses the 257th with MCP_BUSY", async () => {
    const h = start();
    await initialize(h);
    const outcomes: Array<Settled<unknown> | undefined> = [];
    for (let i = 0; i < 257; i += 1) void settled(h.client.callTool("never", {})).then((outcome) => (outcomes[i] = outcome));
    const heard = () => received(h.log(), "tools/call").length + outcomes.filter(Boolean).length;
    await waitFor(() => heard() >= 257, pmsg("lbl257Heard"));
    const busy = outcomes.flatMap((o, i) => (o?.status === "rejected" && o.reason?.code === "MCP_BUSY" ? [i + 1] : []));
    check(busy.length === 1 && busy[0] === 257 && h.client.pendingCount === 256, pmsg("defaultMaxPending", { busyWhere: busy.length === 0 ? pmsg("busyNone") : pmsg("busySome", { busy: busy.length, first: busy[0]! }), pending: h.client.pendingCount }));
  });

  it("rejects initialize() with MCP_PROCESS_EXIT when the server exits during the handshake", async () => {
    const h = start({ scenarios: ["exit-initialize"] });
    let init: Promise<unknown> = new Promise(() => {});
    // Waited for on the server's clock (it must start and read initialize first); then the
    // client has the usual hang deadline to notice the exit. initialize() is called inside the
    // wait, so the wait sees the spawn and counts the start-up as the server's turn.
    const started = Promise.resolve().then(() => {
      init = h.client.initialize();
      init.catch(() => {});
      return serverGone(h);
    });
    await startupWithin(h, started, pmsg("lblServerExitingHandshake"));
    const error = await rejection(init, pmsg("lblInitServerExits"));
    check(error?.code === "MCP_PROCESS_EXIT", pmsg("exitDuringHandshake", { actual: error?.code ?? String(error) }));
    check(!h.client.initialized, pmsg("initializedAfterExit"));
  });

  it("rejects listTools() and callTool() with an already aborted signal with MCP_ABORTED and writes nothing", async () => {
    const h = start();
    await initialize(h);
    const aborted = new AbortController();
    aborted.abort(new Error("stopped before it began"));
    for (const [label, call] of [
      ["listTools()", () => h.client.listTools({ signal: aborted.signal })],
      ["callTool(echo)", () => h.client.callTool("echo", { value: "pre-aborted" }, { signal: aborted.signal })],
    ] as const) {
      const outcome = await settleWithin(Promise.resolve().then(call), pmsg("lblAbortedSignal", { call: label }));
      check(outcome.status === "rejected" && outcome.reason?.code === "MCP_ABORTED", pmsg("preAborted", { label, actual: describeOutcome(outcome) }));
    }
    // Everything written before this answer is in the log.
    await within(h.client.callTool("echo", { value: "after" }), "callTool(echo after)");
    const wrote = received(h.log(), "tools/list").length + received(h.log(), "tools/call").filter((m) => m.params?.arguments?.value === "pre-aborted").length;
    check(wrote === 0, pmsg("wroteAborted", { label: "listTools()/callTool()" }));
  });
});
