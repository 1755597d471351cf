// @ts-check
// Loaded with `--import` into every test worker of a grade (grader/vitest-overrides.ts): starts
// the worker's bridge thread (bridge.mjs) as the process starts, so that its boot (a Node
// environment of its own: tens of ms of CPU, several hundred ms of wall on a loaded machine)
// runs while vitest's runtime in this worker starts and fetches the test files, instead of
// after them. It starts no host: it waits for channel.ts, which hands it the host's command
// with its first message (after the gate), exactly as to a bridge started then.
// Only in the worker's main thread: threads inherit the process's --import, and each bridge
// thread would otherwise start a bridge of its own, without end.
import { isMainThread, Worker } from "node:worker_threads";

/** Bytes of the shared buffer through which the bridge answers synchronous requests. */
export const SAB_BYTES = 16 * 1024 * 1024;

if (isMainThread) {
  const sab = new SharedArrayBuffer(8 + SAB_BYTES);
  const worker = new Worker(new URL("./bridge.mjs", import.meta.url), { workerData: { sab } });
  worker.unref();
  /** @type {Error | undefined} */
  let failed;
  // (Until channel.ts takes it: an error with no listener would end this process.)
  worker.on("error", (error) => (failed ??= error));
  /** @type {Record<symbol, unknown>} */ (globalThis)[Symbol.for("lab.earlyBridge")] = { worker, sab, failed: () => failed };
}
