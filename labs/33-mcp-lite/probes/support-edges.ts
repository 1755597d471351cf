// Helpers of the probes added for the contract's less visited sentences: the harness of
// support.ts, plus waits on what only the fixture can tell (its processes gone).

import { isAlive } from "../../../fixtures/index.ts";
import { SERVER_TURN_MS, type Settled } from "../tests/support.ts";
import { pause } from "./support.ts";
import { drainHost } from "../host/client-side.ts";
import { pmsg } from "./messages.ts";

export { alivePids, start } from "./support.ts";

// Resolves once the fixture recorded at least one pid and every recorded process is gone
// (or, so a broken run never leaves this loop behind, after the server's longest turn).
export async function serverGone(h: { pids(): number[] }): Promise<void> {
  const until = Date.now() + SERVER_TURN_MS;
  while (Date.now() < until) {
    const pids = h.pids();
    if (pids.length > 0 && !pids.some(isAlive)) return;
    await pause(10);
  }
}

// SIGKILL to a fixture process a probe ends itself; one already gone (or never known) is fine.
export function killServer(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/** A promise's outcome as a value: it never rejects, so nothing goes unhandled while a probe waits. */
export function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ status: "fulfilled" as const, value }),
    (reason) => ({ status: "rejected" as const, reason }),
  );
}

/** Characters of a resolved value shown in a message. */
const SHOWN_CHARS = 80;

// A settled outcome in a few words for a message: "resolved <value>" (cut short) or the
// rejection's code (what it is, when it has none).
/** A wait that ended without the call settling (hung, or the host gone), as an outcome whose code is the reason. */
export const unsettled = (error: Error) => ({ status: "rejected" as const, reason: { code: error.message } });

export function describeOutcome(outcome: Settled<unknown>): string {
  if (outcome.status === "rejected") return outcome.reason?.code ?? String(outcome.reason);
  const text = JSON.stringify(outcome.value) ?? "undefined";
  return `resolved ${text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text}`;
}

// Resolves once the fixture recorded at least `count` pids (a stubborn grandchild records its
// own once it ignores SIGTERM), or after the server's longest turn. Not a hang detector's wait:
// nothing of the client's moves while a grandchild starts, so a stillness check would fire.
export async function pidsRecorded(h: { pids(): number[] }, count: number): Promise<void> {
  const until = Date.now() + SERVER_TURN_MS;
  while (Date.now() < until && h.pids().length < count) await pause(10);
}

// The leak check made from outside the client's process (HostChannel.drain): once every client
// is closed, that process must exit on its own, cleanly, within `boundMs`. Resolves to what
// went wrong ("" when nothing), or undefined where the client runs in this process (there is
// no outside to watch it from).
export async function drainProblem(boundMs: number): Promise<string | undefined> {
  const outcome = await drainHost(boundMs);
  if (!outcome) return undefined;
  if (outcome.exited) return outcome.exit?.code === 0 && !outcome.exit.signal ? "" : pmsg("drainEnded", { code: outcome.exit?.code ?? null, signal: outcome.exit?.signal ?? null });
  const counts = new Map<string, number>();
  for (const resource of outcome.resources) counts.set(resource, (counts.get(resource) ?? 0) + 1);
  const kinds = [...counts].map(([kind, n]) => `${kind} ×${n}`).join(", ");
  const what = [kinds, ...outcome.timers.slice(0, 2)].filter(Boolean).join("; ") || "?";
  return pmsg("keptRunning", { ms: boundMs, what });
}
