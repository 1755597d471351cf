// Measurements in a fresh process, so that peak memory (the kernel's high-water mark,
// getrusage maxRSS) belongs to them alone. bench/run.ts starts it as
//   node --import tsx bench/worker.ts <flood deadline ms> <task>:<client>:<server>:<size> ...
// and reads one JSON array (a result per job, in order) from its stdout. Jobs that share a
// process are ordered so that a later one never needs less memory than an earlier one. Tasks:
//   rtt    cold start (spawn to first tools/list answer), then sequential echo round trips
//   burst  `size` echo calls issued at once (after one warm-up burst of the same size); calls/s and memory
//   arg    one call with a `size`-byte string argument (tool "length"); time, memory, stall
//   flood  the server writes `size` bytes with no newline; time to fail, memory, stall, error
// It asserts nothing about time; it reports what happened, including failures.

import { CLIENT_NAMES, createClient, SERVER_NAMES, type ClientName, type ServerName } from "./clients.ts";
import { summarize } from "./stats.ts";
import { TASKS, type Memory, type Task, type WorkerOptions, type WorkerResult } from "./types.ts";

const RTT_WARMUP_CALLS = 1_000;

async function runTask(options: WorkerOptions): Promise<WorkerResult> {
  const client = createClient(options.client, options.server, { inFlight: options.task === "burst" ? options.size : undefined });
  try {
    switch (options.task) {
      case "rtt": {
        const began = performance.now();
        await client.start();
        await client.listTools();
        const coldStartMs = performance.now() - began;
        for (let i = 0; i < RTT_WARMUP_CALLS; i++) await client.call("echo", { value: "warm" });
        const samples: number[] = [];
        for (let i = 0; i < options.size; i++) {
          const t0 = process.hrtime.bigint();
          await client.call("echo", { value: "ping" });
          samples.push(Number(process.hrtime.bigint() - t0) / 1e3);
        }
        return { task: "rtt", coldStartMs, roundTripUs: summarize(samples), calls: options.size };
      }
      case "burst": {
        await client.start();
        // One burst of the same size first: the measured one then runs on warm code, as it
        // would in a long-running agent, for every client alike.
        await Promise.all(Array.from({ length: options.size }, (_, i) => client.call("echo", { value: `warm ${i}` })));
        const before = rssMiB();
        const began = performance.now();
        const outcomes = await Promise.allSettled(
          Array.from({ length: options.size }, (_, i) => client.call("echo", { value: `call ${i}` })),
        );
        const elapsedMs = performance.now() - began;
        const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
        return {
          task: "burst",
          calls: options.size,
          elapsedMs,
          callsPerSecond: (options.size / elapsedMs) * 1000,
          failures: failed.length,
          ...(failed[0] ? { firstError: describe(failed[0].reason) } : {}),
          memory: memorySince(before),
        };
      }
      case "arg": {
        await client.start();
        await client.call("length", { value: "w".repeat(64 * 1024) });
        const value = "a".repeat(options.size);
        const before = rssMiB();
        const stall = stallMeter();
        const began = performance.now();
        let ok = false;
        let error: string | undefined;
        try {
          const result = (await client.call("length", { value })) as { content?: Array<{ text?: string }> };
          ok = result?.content?.[0]?.text === String(options.size);
          if (!ok) error = `unexpected answer ${JSON.stringify(result).slice(0, 200)}`;
        } catch (cause) {
          error = describe(cause);
        }
        const elapsedMs = performance.now() - began;
        return { task: "arg", bytes: options.size, ok, elapsedMs, ...(error ? { error } : {}), maxStallMs: stall.stop(), memory: memorySince(before) };
      }
      case "flood": {
        await client.start();
        const before = rssMiB();
        const stall = stallMeter();
        const began = performance.now();
        const outcome = await settleWithin(client.call("flood", { bytes: options.size }), options.deadlineMs);
        const timeToFailMs = performance.now() - began;
        const maxStallMs = stall.stop();
        const memory = memorySince(before);
        const base = { task: "flood" as const, bytes: options.size, timeToFailMs, maxStallMs, memory };
        if (outcome.kind === "rejected") {
          const code = (outcome.reason as { code?: unknown })?.code;
          return { ...base, failed: true, ...(code !== undefined ? { errorCode: String(code) } : {}), error: describe(outcome.reason) };
        }
        return { ...base, failed: false, error: outcome.kind === "pending" ? `still pending after ${options.deadlineMs} ms` : "resolved" };
      }
    }
  } finally {
    await client.close();
  }
}

function rssMiB(): number {
  return process.memoryUsage.rss() / 2 ** 20;
}

function memorySince(beforeMiB: number): Memory {
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  return { beforeMiB, peakMiB, growthMiB: Math.max(0, peakMiB - beforeMiB) };
}

// Measures the longest gap between ticks of a 1 ms interval: how long the event loop was
// blocked at worst while the work ran.
function stallMeter(): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(worst, performance.now() - last);
    },
  };
}

type Settled = { kind: "resolved"; value: unknown } | { kind: "rejected"; reason: unknown } | { kind: "pending" };

function settleWithin(promise: Promise<unknown>, ms: number): Promise<Settled> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "pending" }), ms);
  });
  const settled = promise.then(
    (value): Settled => ({ kind: "resolved", value }),
    (reason): Settled => ({ kind: "rejected", reason }),
  );
  return Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

// Parses "<flood deadline ms> <task>:<client>:<server>:<size> ...".
function parseArgs(argv: string[]): WorkerOptions[] {
  const [deadline, ...specs] = argv;
  const deadlineMs = Number(deadline);
  if (!Number.isInteger(deadlineMs) || deadlineMs <= 0) throw new Error(`deadline must be a positive integer, got ${deadline}`);
  if (specs.length === 0) throw new Error("no job given");
  return specs.map((spec) => {
    const [task, client, server, size] = spec.split(":");
    if (!TASKS.includes(task as Task)) throw new Error(`unknown task ${task}`);
    if (!CLIENT_NAMES.includes(client as ClientName)) throw new Error(`unknown client ${client}`);
    if (!SERVER_NAMES.includes(server as ServerName)) throw new Error(`unknown server ${server}`);
    const n = Number(size);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`size must be a positive integer, got ${size}`);
    return { task: task as Task, client: client as ClientName, server: server as ServerName, size: n, deadlineMs };
  });
}

// Jobs run one after another; each reports its own memory figures (see Memory).
const results: WorkerResult[] = [];
for (const options of parseArgs(process.argv.slice(2))) results.push(await runTask(options));
process.stdout.write(`${JSON.stringify(results)}\n`);
