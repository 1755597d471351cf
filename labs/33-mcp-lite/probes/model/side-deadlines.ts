// The model's side steps for the deadlines a client keeps: which timeoutMs a call gets (the
// client's when it has none of its own, its own when it has one, even a longer one), read from
// the delay of the timer the client made for the call (initialize() has the client's deadline
// too, and one short enough to wait for would race the server's start on a loaded machine);
// and close() on a server that ignores SIGTERM with closeTimeoutMs at its default of 2 s,
// waited out (its own client and server: beside the other steps, it costs no time of theirs).

import { clientTimerDelays, HANG_MS, received, timerSnapshot, waitFor } from "../../tests/support.ts";
import { isAlive } from "../../../../fixtures/index.ts";
import { describeOutcome, settled } from "../support-edges.ts";
import { mmsg } from "./messages.ts";
import { expectThat, settle, type Dimension } from "./model.ts";
import { expectInitialized, SideStep } from "./side.ts";

/** CONTRACT §1: timeoutMs defaults to 30 000 ms, closeTimeoutMs to 2 000 ms. */
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 2_000;
/** The client's timeoutMs, and a call's own, longer one: values no other client of the model uses. */
const CLIENT_MS = 43_000;
const OWN_MS = 47_000;

// Two fresh clients, one call each (a client that keeps one timer for its earliest deadline
// shows this call's own). A client that keeps its deadlines some other way (a sweep) makes no
// timer of the wrong delay and is not judged; the run's other clients beside it make none of
// these delays either.
export class CallDeadlines extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/lifecycle";
  }
  override get escapeNeeds(): string {
    return "timeout";
  }
  async side(): Promise<void> {
    for (const [own, expected, wrong] of [[undefined, CLIENT_MS, DEFAULT_TIMEOUT_MS], [OWN_MS, OWN_MS, CLIENT_MS]] as const) {
      await this.withSide({ timeoutMs: CLIENT_MS }, {}, async (side) => {
        await expectInitialized(side);
        const before = timerSnapshot();
        const step = own === undefined ? `new McpClient({ timeoutMs: ${CLIENT_MS} }): callTool("never")` : `new McpClient({ timeoutMs: ${CLIENT_MS} }): callTool("never", {}, { timeoutMs: ${own} })`;
        void settled(Promise.resolve().then(() => side.client.callTool("never", {}, own === undefined ? undefined : { timeoutMs: own })));
        await waitFor(() => received(side.ws.log(), "tools/call").length > 0, mmsg("waitNever")).catch(() => {});
        const delays = clientTimerDelays(before);
        expectThat(!(delays.includes(wrong) && !delays.includes(expected)), "rubric/lifecycle", "callDeadline", { step, expected, actual: wrong });
      });
    }
  }
  toString(): string {
    return mmsg("deadlinesStep", { client: CLIENT_MS, own: OWN_MS });
  }
}

// close() may not force the server before the default grace, and must not wait much longer
// (a hang detector's margin past it, not a stopwatch). Waited out in full, beside the tour: this
// is the one check that sees the client force the server at 2 s itself (probes/process.test.ts
// reads the 2 s timer and ends the server itself, so a grace timer that fires and does nothing
// is only seen here). The hang clock counts only the client's own turns, so on a machine loaded
// far past its cores it may let a much longer grace run out first: a close() that resolved
// later than LONGEST_GRACE_MS on the wall clock is too late as well, whatever the load (a 10 s
// timer cannot fire sooner). A correct client is that late only when its process was held off
// the CPU for seconds, so such a close() is tried once more, with a fresh client and server.
const LONGEST_GRACE_MS = DEFAULT_CLOSE_TIMEOUT_MS + 6_000;
export class DefaultGrace extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async side(): Promise<void> {
    if (await this.closeOnce(false)) await this.closeOnce(true);
  }
  // One client on the default grace, closed; true when its close() resolved after the grace but
  // later than LONGEST_GRACE_MS (on the first attempt only: judged as a failure on the second).
  private async closeOnce(last: boolean): Promise<boolean> {
    let late = false;
    await this.withSide({}, { scenarios: ["ignore-sigterm"] }, async (side) => {
      await expectInitialized(side);
      const began = performance.now();
      const closing = settled(Promise.resolve().then(() => side.client.close())).then((outcome) => ({ outcome, ms: Math.round(performance.now() - began) }));
      // Judged by the hang clock alone: the host's word that nothing can settle close() is not
      // taken here (a client whose tracker lies would be charged a hang, not the leak it hides).
      const ended = await settle(settled(closing), "close()", DEFAULT_CLOSE_TIMEOUT_MS + HANG_MS, { stillness: false });
      const value = ended.status === "fulfilled" ? (ended.value as { outcome: { status: string }; ms: number }) : undefined;
      const resolved = value !== undefined && value.outcome.status === "fulfilled";
      late = resolved && value.ms > LONGEST_GRACE_MS && !last;
      const ok = resolved && value.ms >= DEFAULT_CLOSE_TIMEOUT_MS - 50 && value.ms <= LONGEST_GRACE_MS;
      const actual = value === undefined ? describeOutcome(ended) : value.outcome.status === "fulfilled" ? mmsg("closedAfter", { ms: value.ms }) : describeOutcome(value.outcome as never);
      if (!late) expectThat(ok, "rubric/process", "defaultGrace", { step: this.toString(), ms: DEFAULT_CLOSE_TIMEOUT_MS, actual });
      const left = side.ws.pids().filter(isAlive);
      expectThat(left.length === 0, "rubric/process", "alive", { step: "close()", pids: left.join(", ") });
    });
    return late;
  }
  toString(): string {
    return mmsg("defaultGraceStep", { ms: DEFAULT_CLOSE_TIMEOUT_MS });
  }
}
