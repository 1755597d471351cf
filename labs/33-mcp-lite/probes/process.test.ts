// Rubric probe: 进程 (process). No shell, whatever child_process API is used; odd
// arguments arrive verbatim; the grader's environment does not leak; close() resolves
// only once the server (and its children) are gone, concurrent closes share that
// shutdown, and a server that ignores SIGTERM is killed after closeTimeoutMs.

import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter } from "node:path";
import { describe, it } from "vitest";
import { check, clientTimerDelays, HANG_MS, initialize, needs, rejection, SERVER_TURN_MS, settleWithin, timerSnapshot, waitFor, within } from "../tests/support.ts";
import { killAll } from "../../../fixtures/index.ts";
import { noted } from "../tests/messages.ts";
import { pmsg } from "./messages.ts";
import { clientProcessPid } from "../host/client-side.ts";
import { processesStarted, resetSpawnCalls, spawnCalls } from "../tests/support.ts";
import { alivePids, SEED, start } from "./support.ts";
import { describeOutcome, pidsRecorded, settled, unsettled } from "./support-edges.ts";

/** Arguments a shell would split, unquote, substitute or run. */
const ODD_ARGS = ["two words", `it's "quoted"`, "$(echo injected)", "a; echo b", "*", "back`tick`", "$HOME", "x > y", "", "  padded  ", "中文 ünï", "--flag=a b"];
/** Variables a server may get beyond the configured env: PATH and what a platform needs to start a program. */
const PLATFORM_ENV = new Set(["PATH", "Path", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec", "TEMP", "TMP"]);
const SECRET_NAME = "LAB33_PROBE_SECRET";

describe("rubric/process", () => {
  it("starts the server without a shell and passes odd arguments through verbatim", async () => {
    resetSpawnCalls();
    // (Its program's path has a space: the executable is one path, never a command line.)
    const h = start({ extraArgs: ["--", ...ODD_ARGS] }, {}, true);
    const command = h.command;
    await initialize(h);
    const shelled = spawnCalls().filter((call) => call.api !== "process" && call.shell);
    check(shelled.length === 0, pmsg("shellUsed", { call: shelled[0] }));
    // What actually ran, whatever the options said: the program and argv handed to the OS.
    // A shell shows up here as /bin/sh -c …, even when it execs the server right away.
    // Only what starts the server counts here (helpers of its own are probe/orphans' business).
    const script = command.args[0]!;
    const started = processesStarted().filter((p) => [p.command, ...p.args].some((a) => a.includes(script)));
    const direct = started.length > 0 && started.every((p) => p.command === command.executable);
    check(direct, pmsg("shellBetween", { what: started.map((p) => [p.command, ...p.args].join(" ")).join(" | ") || pmsg("nothing") }));
    // The right program, but not the arguments it was given: they were changed on the way.
    const changed = started.find((p) => JSON.stringify(p.args) !== JSON.stringify(command.args));
    check(!changed, pmsg("argsMangled", { expected: JSON.stringify(command.args.slice(command.args.indexOf("--") + 1)), actual: JSON.stringify(changed?.args.slice(changed.args.indexOf("--") + 1)) }));
    const seen = (await within(h.client.callTool("inspect", {}), "callTool(inspect)")) as { content?: unknown; argv?: string[]; ppid?: number; parent?: { exe?: string; argv?: string[] } };
    // And from the server's side: its parent is the process the client runs in.
    check(seen?.ppid === clientProcessPid(), pmsg("notDirectChild", { parent: `${seen?.ppid} ${(seen?.parent?.argv ?? [seen?.parent?.exe]).join(" ")}` }));
    const argv = ((seen as any)?.argv ?? []) as string[];
    const after = argv.slice(argv.indexOf("--") + 1);
    check(argv.includes("--") && JSON.stringify(after) === JSON.stringify(ODD_ARGS), pmsg("argsMangled", { expected: ODD_ARGS, actual: after }));
  });

  it("passes the configured env and cwd but nothing else of the grader's environment to the server", async () => {
    const secret = `secret-${SEED}`;
    process.env[SECRET_NAME] = secret;
    try {
      const cwd = realpathSync(tmpdir());
      const h = start({}, { env: { LAB33_GIVEN: "given" }, cwd });
      await initialize(h);
      const seen = (await within(h.client.callTool("inspect", {}), "callTool(inspect)")) as any;
      const env = (seen?.env ?? {}) as Record<string, string>;
      check(env[SECRET_NAME] === undefined, pmsg("secretLeaked", { name: SECRET_NAME }));
      check(env.LAB33_GRADE_TOKEN === undefined, pmsg("secretLeaked", { name: "LAB33_GRADE_TOKEN" }));
      check(env.LAB33_GIVEN === "given", pmsg("envMissing", { name: "LAB33_GIVEN" }));
      // The allowlist's one name on every platform: a server finds its programs by it.
      check(process.env.PATH === undefined || env.PATH === process.env.PATH, pmsg("pathMissing", { actual: env.PATH === undefined ? pmsg("unset") : JSON.stringify(env.PATH.slice(0, 200)) }));
      const extra = Object.keys(env).filter((name) => name !== "LAB33_GIVEN" && !PLATFORM_ENV.has(name) && process.env[name] !== undefined);
      check(extra.length === 0, pmsg("envExtra", { names: extra.slice(0, 5).join(", ") }));
      check(seen?.cwd === cwd, pmsg("cwdIgnored", { expected: cwd, actual: seen?.cwd }));
      // The configured env goes on top of the allowlist: a PATH of its own wins over the client's.
      if (process.env.PATH !== undefined) {
        const path = `${process.env.PATH}${delimiter}${cwd}`;
        const own = start({}, { env: { PATH: path } });
        await initialize(own);
        const ownSeen = (await within(own.client.callTool("inspect", {}), noted("callTool(inspect)", pmsg("noteOwnPath")))) as any;
        const actual = ownSeen?.env?.PATH;
        check(actual === path, pmsg("configuredPath", { actual: actual === undefined ? pmsg("unset") : JSON.stringify(String(actual).slice(-200)) }));
      }
    } finally {
      delete process.env[SECRET_NAME];
    }
  });

  it("resolves close() only after the server is gone, and two concurrent close() calls share that shutdown", async () => {
    // This server ignores SIGTERM and the end of its stdin, and closeTimeoutMs is a minute: only
    // the test ends it. So a close() that resolves before then resolved with the server alive,
    // however fast or slow the machine is: the fixture decides the order, not a delay.
    const h = start({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs: 60_000 });
    await initialize(h);
    // What was alive as each close() resolved, before the test ended the server (a client
    // that SIGKILLs it first and waits for the exit leaves nothing: that is judged elsewhere).
    let ended = false;
    const early: string[] = [];
    // The server running now is the one close() must ask to stop (no other session counts).
    const handled = h.ws.serversNow();
    const closes = [1, 2].map((n) => {
      const closing = settled(Promise.resolve().then(() => h.client.close()));
      void closing.then(() => {
        const alive = ended ? [] : alivePids(h);
        if (alive.length > 0) early.push(`close() #${n} (${alive.join(", ")})`);
      });
      return closing;
    });
    try {
      // Bounded and allowed to run out: a client that never signals is judged below all the same.
      await waitFor(() => handled() > 0 || early.length > 0, pmsg("lblSigtermHeard")).catch(() => {});
      // One more call, wrapped as the close() calls are: its refusal comes back (in the client's
      // host, on the same pipe) after whatever the two close() calls had settled before it.
      await settled(Promise.resolve().then(() => h.client.initialize()));
    } finally {
      ended = true;
      // A SIGKILL is delivered when its process is next scheduled, not when kill() returns:
      // what the test ended is waited for (bounded) until it is dead, so that a server the
      // client started meanwhile (a call made during close() that starts one) is not read as
      // alive below on a busy machine and gone on a quiet one.
      await killAll(h.pids(), SERVER_TURN_MS);
    }
    // Both resolve once the server is gone (waited for before judging, so what the test leaves
    // to the harness's cleanup does not depend on how quickly the server died).
    const outcomes = await within(Promise.all(closes), pmsg("lblBothCloses"), HANG_MS + 2_000);
    for (const [i, outcome] of outcomes.entries()) {
      check(outcome.status === "fulfilled", pmsg("closeRejected", { which: `close() #${i + 1}`, actual: outcome.status === "rejected" ? String((outcome.reason as { code?: unknown })?.code ?? outcome.reason) : "" }));
    }
    check(early.length === 0, pmsg("closedWhileRunning", { which: early.join(", ") }));
    const alive = alivePids(h);
    check(alive.length === 0, pmsg("aliveAfterClose", { which: "close()", pids: alive.join(", ") }));
  });

  it("leaves no child of the server behind after close()", async () => {
    // The server starts a grandchild in its own process group; the grandchild ignores SIGTERM
    // (only SIGKILL ends it) and records its pid once it does.
    const h = start({ scenarios: ["stubborn-grandchild"] });
    await initialize(h);
    await pidsRecorded(h, 2);
    // First a server that exits on its own, leaving its grandchild running (the seed: killing
    // the parent alone leaves orphans); then a fresh one, alive when close() runs.
    await needs("exit", async () => {
      await rejection(h.client.callTool("exit", { code: 3 }), "callTool(exit)");
      await initialize(h, pmsg("lblInitAfterServerExited"));
    });
    await pidsRecorded(h, 4);
    const [, leftBehind] = h.pids();
    await within(h.client.close(), "close()", HANG_MS + 2_000);
    const alive = alivePids(h);
    const orphaned = leftBehind !== undefined && alive.includes(leftBehind);
    check(!orphaned, pmsg("grandchildAfterExit", { pid: leftBehind }));
    check(alive.length === 0, pmsg("aliveAfterClose", { which: "close()", pids: alive.join(", ") }));
  });

  it("kills a server that ignores SIGTERM once closeTimeoutMs (2 s by default) has passed, not sooner", async () => {
    const closeTimeoutMs = 200;
    const h = start({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs });
    // And a client on the default grace (CONTRACT §1: 2 s), closed at the same time: its
    // close() may not force the server sooner, and must not wait much longer.
    const defaultMs = 2_000;
    const d = start({ scenarios: ["ignore-sigterm"] });
    await initialize(h);
    await initialize(d);
    const handled = d.ws.serversNow();
    const before = timerSnapshot();
    const began = performance.now();
    let closedDefault = false;
    const closingDefault = settled(Promise.resolve().then(() => d.client.close())).then((outcome) => ((closedDefault = true), { outcome, ms: Math.round(performance.now() - began) }));
    // Hang detectors, not stopwatches: the grace plus the usual margin.
    await within(h.client.close(), pmsg("lblCloseWithGrace", { ms: closeTimeoutMs }), closeTimeoutMs + HANG_MS);
    const alive = alivePids(h);
    check(alive.length === 0, pmsg("aliveAfterClose", { which: "close()", pids: alive.join(", ") }));
    const label = pmsg("lblCloseDefaultGrace");
    // The default grace, read where the client shows it: once the server has had its SIGTERM,
    // a live timer of exactly 2 s, close() still waiting and the server alive say the client
    // will force it at 2 s, not sooner; the test then ends the server itself, and close() must
    // resolve. (A timer armed before the SIGTERM has fired by then; no other client in this
    // process makes a 2 s timer.) A client that shows no such timer is waited out instead. (That
    // the timer's end forces the server is what the 200 ms client above shows, and the model's
    // DefaultGrace step, which waits the default grace out beside its other steps.)
    await waitFor(() => handled() > 0 || closedDefault, pmsg("lblSigtermHeard")).catch(() => {});
    if (!closedDefault && clientTimerDelays(before).includes(defaultMs) && alivePids(d).length > 0) {
      await killAll(d.pids(), SERVER_TURN_MS);
      const ended = await settleWithin(closingDefault, label).catch(unsettled);
      const outcome = ended.status === "fulfilled" ? ended.value.outcome : ended;
      check(outcome.status === "fulfilled", pmsg("graceEndedByTest", { label, ms: defaultMs, actual: describeOutcome(outcome) }));
    } else {
      // (By the hang clock alone: the host's word that nothing can settle close() is not taken.)
      const ended = await settleWithin(closingDefault, label, defaultMs + HANG_MS, { stillness: false }).catch(unsettled);
      const actual = ended.status === "fulfilled" ? (ended.value.outcome.status === "fulfilled" ? pmsg("closedAfter", { ms: ended.value.ms }) : describeOutcome(ended.value.outcome)) : describeOutcome(ended);
      check(ended.status === "fulfilled" && ended.value.outcome.status === "fulfilled" && ended.value.ms >= defaultMs - 50, pmsg("defaultGrace", { label, ms: defaultMs, actual }));
    }
    const left = alivePids(d);
    check(left.length === 0, pmsg("aliveAfterClose", { which: label, pids: left.join(", ") }));
  });
});
