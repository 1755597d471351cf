// Rubric probe: 生命周期 (lifecycle), second half: a timeout and an abort firing together
// settle the call once, and the seed's stress (100 calls with random delays) leaves nothing
// pending, no timer and no listener. The first half is lifecycle.test.ts.

import { describe, it } from "vitest";
import { abortAfter } from "../host/client-side.ts";
import { check, initialize, needs, PENDING_MAP_TODO, rejection, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { escapedErrors, expectClean, pause, SEED, seededRandom, start } from "./support.ts";

describe("rubric/lifecycle", () => {
  it("settles a call exactly once when its timeout and its abort fire together, in either order", async () => {
    const h = start();
    await initialize(h);
    const escaped = escapedErrors();
    try {
      // Timers of one duration fire in the order they were made, within one process: the abort
      // is timed in the client's own process (abortAfter), first after the client's own
      // deadline, then (second round) before it: a warm-up call hands the signal over first.
      for (const abortFirst of [false, true]) {
        const controller = new AbortController();
        await within(h.client.callTool("echo", { value: "warm-up" }, { signal: controller.signal }), "callTool(echo)");
        let cancel: (() => void) | undefined;
        if (abortFirst) cancel = abortAfter(controller, 40);
        const call = h.client.callTool("never", {}, { timeoutMs: 40, signal: controller.signal });
        if (!abortFirst) cancel = abortAfter(controller, 40);
        const error = await rejection(call, pmsg("lblRaceCall"));
        // Client's timer first: either outcome (a client may start its timer a turn later).
        // The abort's first: made before the call, it expires before any timer of timeoutMs the
        // call starts, so the abort wins (a client that ignored the signal would time out, and
        // used to pass here).
        if (abortFirst) check(error?.code === "MCP_ABORTED", pmsg("raceAbortFirst", { actual: error?.code ?? String(error) }));
        else check(error?.code === "MCP_TIMEOUT" || error?.code === "MCP_ABORTED", pmsg("raceCode", { actual: error?.code ?? String(error) }));
        await pause(60);
        cancel?.();
        expectClean(h, "timeout + abort", [controller.signal]);
      }
      const after = await within(h.client.callTool("echo", { value: "after the race" }), pmsg("lblAfterRace"));
      check(JSON.stringify(after) === JSON.stringify({ content: "after the race" }), pmsg("wrongAnswer", { label: "callTool(echo)", expected: { content: "after the race" }, actual: after }));
      check(escaped.errors.length === 0, pmsg("escaped", { when: "timeout + abort", error: String(escaped.errors[0]) }));
    } finally {
      escaped.stop();
    }
  });

  it("answers 100 calls with seeded random delays each to its caller, and leaves nothing behind", async () => {
    const h = start();
    await initialize(h);
    const random = seededRandom(SEED);
    const shared = new AbortController(); // one long-lived signal: every call must remove its listener
    const calls = Array.from({ length: 100 }, (_, i) =>
      h.client.callTool("echo", { value: i, delay: Math.floor(random() * 40) }, { signal: shared.signal }),
    );
    const answers = await within(Promise.all(calls), pmsg("lblHundredCalls"));
    // Which answer goes to which call is id matching's business (rubric/id-matching).
    await needs(PENDING_MAP_TODO, async () =>
      answers.forEach((answer, i) =>
        check(JSON.stringify(answer) === JSON.stringify({ content: i }), pmsg("wrongAnswer", { label: pmsg("lblCallN", { n: i }), expected: { content: i }, actual: answer })),
      ),
    );
    expectClean(h, pmsg("whenHundredCalls"), [shared.signal]);
  });
});
