// The client hosts' gate (grader/child/gate.ts): in a grade, vitest's main process writes
// "go" to LAB_GATE_FILE once the import check passed ("stop" when it failed), and a worker
// starts its first host only after reading "go". The test workers themselves start and load
// their test files alongside the import check (they never load the submission). "go unbundled"
// opens it too, and says the grader could not build the hosts' bundles (grader/host-bundle.ts):
// the hosts then load the submission through tsx. Outside a grade (no LAB_GATE_FILE) there is
// no gate.
import { readFileSync } from "node:fs";

/** How often a worker waiting at the gate looks again (ms). */
const GATE_POLL_MS = 5;

let open = false;
let unbundled = false;

/** True once the gate opened with "go unbundled". */
export function gateSaysUnbundled(): boolean {
  return unbundled;
}

/** Returns once the gate is open; throws when the grader stopped the run before it began. */
export function waitForGate(file = process.env.LAB_GATE_FILE): void {
  if (open || !file) return;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let verdict = "";
    try {
      verdict = readFileSync(file, "utf8");
    } catch {
      // not written yet
    }
    if (verdict === "go" || verdict === "go unbundled") {
      open = true;
      unbundled = verdict === "go unbundled";
      return;
    }
    if (verdict === "stop") throw new Error("the grader stopped the run before it began (the import check failed)");
    // The wait is synchronous (a host is asked for synchronously); the grader's deadline bounds it.
    Atomics.wait(nap, 0, 0, GATE_POLL_MS);
  }
}
