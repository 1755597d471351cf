// Evidence test: evidence/abort. An aborted signal starts nothing; aborting a running program
// stops it; and the listener is removed whether the run was aborted or ended normally.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { abortListeners, check, expectCode, expectNothingLeft, rejection, within, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

describe("evidence/abort", () => {
  it("starts nothing for an aborted signal, stops a running program on abort, and removes its listener", async () => {
    const ws = workspace();
    const marker = join(ws.dir, "ran");
    const pre = new AbortController();
    pre.abort(new Error("user pressed stop"));
    const early = await rejection(runProcess(NODE, { args: ws.programArgs("touch", marker), signal: pre.signal }), say("预先 abort 的 runProcess", "a pre-aborted runProcess"));
    expectCode(early, "ABORTED", say("预先 abort 的 runProcess", "a pre-aborted runProcess"));

    const running = new AbortController();
    const run = runProcess(NODE, { args: ws.programArgs("hang"), signal: running.signal });
    // Abort once the program is known to run (it records its pid first thing).
    const started = Date.now();
    while (ws.pids().length === 0 && Date.now() - started < 5_000) await new Promise((r) => setImmediate(r));
    running.abort(new Error("cancelled by the agent"));
    const aborted = await rejection(run, say("运行中被 abort 的 runProcess", "a runProcess aborted while running"));
    expectCode(aborted, "ABORTED", say("运行中被 abort 的 runProcess", "a runProcess aborted while running"));
    check(abortListeners(running.signal) === 0, msg("listenersLeft", { when: say("abort ", "abort"), count: abortListeners(running.signal) }));

    const longLived = new AbortController();
    await within(runProcess(NODE, { args: ws.programArgs("hello"), signal: longLived.signal }), say("带 signal 的 runProcess(hello)", "runProcess(hello) with a signal"));
    check(abortListeners(longLived.signal) === 0, msg("listenersLeft", { when: say("正常结束", "a normal exit"), count: abortListeners(longLived.signal) }));
    // The hello run started after the pre-aborted call and has finished: had that call
    // started its program, the marker would be there by now.
    check(!existsSync(marker), msg("spawnedAfterAbort"));
    expectNothingLeft(ws, "abort");
  });
});
