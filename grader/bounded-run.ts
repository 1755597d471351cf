// The one way the grader waits for a process it started detached (its own process group):
// the tail of its output, an overall deadline, an abort signal, and the whole group killed
// when it ends, however it ends. The type check, the import check and the test run use it.

import type { ChildProcess } from "node:child_process";
import { killGroup } from "./procs.ts";

/** Output kept by default from a child's stdout+stderr, in bytes (the tail). */
export const DEFAULT_OUTPUT_TAIL_BYTES = 64 * 1024;

export interface BoundedOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The last `tailBytes` characters the child printed (stdout and stderr together). */
  output: string;
  /** The child could not be started or failed (the 'error' event). */
  error?: Error;
}

export interface BoundOptions {
  deadlineMs: number;
  /** How much output to keep; 0 drains it unread. Default DEFAULT_OUTPUT_TAIL_BYTES. */
  tailBytes?: number;
  /** Aborting it kills the group (the run is no longer wanted). */
  signal?: AbortSignal;
  /** Runs when the deadline fires, before the group kill (to look at the tree once more). */
  atDeadline?: () => void;
  /** Runs when the child has exited, before the group kill (to see what outlived it). */
  atExit?: () => void;
}

// Waits for a detached child under a deadline; resolves once it exited (or failed to start)
// and its group was killed.
export function bound(child: ChildProcess, options: BoundOptions): Promise<BoundedOutcome> {
  const tailBytes = options.tailBytes ?? DEFAULT_OUTPUT_TAIL_BYTES;
  let output = "";
  const keep = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    if (output.length > tailBytes * 2) output = output.slice(-tailBytes);
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (tailBytes > 0) stream?.on("data", keep);
    else stream?.resume();
  }
  const killAll = () => {
    if (child.pid !== undefined) killGroup(child.pid);
  };
  return new Promise((resolvePromise) => {
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      options.atDeadline?.();
      killAll();
    }, options.deadlineMs);
    options.signal?.addEventListener("abort", killAll, { once: true });
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener("abort", killAll);
      options.atExit?.();
      // Whatever the child left in its group goes with it.
      killAll();
      resolvePromise({ code, signal, timedOut, output: output.slice(-tailBytes), ...(error ? { error } : {}) });
    };
    child.on("error", (error) => finish(null, null, error));
    // 'exit', not 'close': a process the child left behind can hold the pipes open.
    child.on("exit", (code, signal) => finish(code, signal));
  });
}
