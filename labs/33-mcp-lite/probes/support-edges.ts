// Helpers of the probes added for the contract's less visited sentences: the harness of
// support.ts, plus waits on what only the fixture can tell (its processes gone).

import { isAlive } from "../../../fixtures/index.ts";
import { SERVER_TURN_MS } from "../tests/support.ts";
import { pause } from "./support.ts";

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

// Resolves once the fixture recorded at least `count` pids (a stubborn grandchild records its
// own once it ignores SIGTERM), or after the server's longest turn. Not a hang detector's wait:
// nothing of the client's moves while a grandchild starts, so a stillness check would fire.
export async function pidsRecorded(h: { pids(): number[] }, count: number): Promise<void> {
  const until = Date.now() + SERVER_TURN_MS;
  while (Date.now() < until && h.pids().length < count) await pause(10);
}
