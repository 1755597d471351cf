// Runs the fault battery's scenarios against the workbook's reference client and against
// the official MCP TypeScript SDK client (Client + StdioClientTransport), each scenario in
// a fresh child process so its peak memory is its own, and writes the outcome table to
// docs/faults-compare.md. `npm run faults:compare [-- --only id,id] [--out FILE]`.
//
// Each cell records what a caller sees: how the call ended (or that it was still pending
// when the observation window closed), how long that took, and how many of the fixture's
// processes were still alive after close() resolved.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, platform, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { getEventListeners } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  createFixtureWorkspace,
  fixtureCommand,
  isAlive,
  killAll,
  readLog,
  readPids,
  readState,
  type FixtureOptions,
  type FixtureWorkspace,
} from "../fixtures/index.ts";
import { McpClient } from "../labs/33-mcp-lite/solution/src/mcp-client.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MiB = 1024 * 1024;
/** How long a call may stay pending before the cell says "still pending". */
const WINDOW_MS = 3_000;
/** Grace between SIGTERM and SIGKILL for the reference client's close(). */
const CLOSE_TIMEOUT_MS = 500;

type ClientKind = "reference" | "sdk";

// The SDK version this comparison runs against, as package-lock.json pins it.
function sdkVersion(): string {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages?: Record<string, { version?: string }> };
  return lock.packages?.["node_modules/@modelcontextprotocol/sdk"]?.version ?? "(version unknown)";
}

// ---- drivers: the same few operations on either client ---------------------------------

interface CallOpts {
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface Driver {
  start(): Promise<void>;
  call(name: string, args?: Record<string, unknown>, opts?: CallOpts): Promise<unknown>;
  close(): Promise<void>;
  pid(): number | undefined;
  /** Bytes of server stderr the client holds on to. */
  stderrKeptBytes(): number;
  /** The stderr-flood scenario's end marker was read. */
  floodEnded(): boolean;
}

function referenceDriver(command: { executable: string; args: string[] }): Driver {
  const client = new McpClient({ ...command, timeoutMs: 60_000, closeTimeoutMs: CLOSE_TIMEOUT_MS });
  return {
    start: async () => void (await client.initialize()),
    call: (name, args = {}, opts = {}) => handled(client.callTool(name, args, opts)),
    close: () => client.close(),
    pid: () => client.pid,
    stderrKeptBytes: () => Buffer.byteLength(client.stderr.text),
    floodEnded: () => client.stderr.text.endsWith("FLOOD-END\n"),
  };
}

function sdkDriver(command: { executable: string; args: string[] }): Driver {
  // stderr "pipe" and drained here: the SDK leaves stderr to the caller (default "inherit").
  const transport = new StdioClientTransport({ command: command.executable, args: command.args, stderr: "pipe" });
  let last = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    last = (last + chunk.toString("latin1")).slice(-16);
  });
  const client = new Client({ name: "faults-compare", version: "1.0.0" });
  return {
    start: () => client.connect(transport),
    call: (name, args = {}, opts = {}) =>
      handled(
        client.request({ method: "tools/call", params: { name, arguments: args } }, ResultSchema, {
          timeout: opts.timeoutMs ?? 60_000,
          signal: opts.signal,
        }),
      ),
    close: () => client.close(),
    pid: () => transport.pid ?? undefined,
    stderrKeptBytes: () => 0,
    floodEnded: () => last.endsWith("FLOOD-END\n"),
  };
}

// ---- observation helpers ---------------------------------------------------------------

// Marks a call's rejection as handled (a scenario may observe it only after close()), and
// returns the same promise for observation.
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

interface Observed {
  outcome: string;
  ms: number;
}

// Watches a call: its outcome and when it came, or "still pending" after the window.
async function observe(promise: Promise<unknown>, windowMs = WINDOW_MS): Promise<Observed> {
  const began = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`still pending after ${windowMs} ms`), windowMs)));
  const settled = promise.then(
    (value) => `resolved ${short(JSON.stringify(value) ?? "undefined")}`,
    (error) => `rejected ${describeError(error)}`,
  );
  const outcome = await Promise.race([settled, pending]);
  clearTimeout(timer);
  return { outcome, ms: Math.round(performance.now() - began) };
}

function describeError(error: any): string {
  if (error?.code && typeof error.code === "string") {
    const cause = error.cause?.name ? ` (cause ${error.cause.name})` : "";
    return `${error.code}${cause}`;
  }
  if (typeof error?.code === "number") return `McpError ${error.code}: ${short(String(error.message).replace(/^MCP error -?\d+: /, ""))}`;
  return `${error?.name ?? "Error"}: ${short(String(error?.message ?? error))}`;
}

function short(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, ms: number, everyMs = 5): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}

function received(ws: FixtureWorkspace, method: string): any[] {
  return ws.log().filter((e) => e.dir === "in" && e.msg?.method === method).map((e) => e.msg);
}

// Closes with a bound, so a close() that never resolves is reported, not waited on.
async function closeAndCount(d: Driver, ws: FixtureWorkspace): Promise<{ close: Observed; left: number }> {
  const close = await observe(d.close(), 10_000);
  return { close, left: ws.pids().filter(isAlive).length };
}

// ---- the scenarios ------------------------------------------------------------------------

interface Row {
  outcome: string;
  ms?: number;
  left: number;
  note?: string;
}

interface Scenario {
  id: string;
  title: string;
  fixture: FixtureOptions;
  memory?: boolean;
  run(d: Driver, ws: FixtureWorkspace, kind: ClientKind): Promise<Row>;
}

// A scenario of its own shape: the fixture options it needs and what it does.
function scenario(id: string, title: string, fixture: FixtureOptions, run: Scenario["run"], extra: Pick<Scenario, "memory"> = {}): Scenario {
  return { id, title, fixture, run, ...extra };
}

// The shape most faults share: start, leave one call pending, trigger the fault with a
// second call, and report both calls plus what close() left behind.
function faultOnCall(id: string, title: string, scenario: string, extra: Partial<Scenario> = {}): Scenario {
  return {
    id,
    title,
    fixture: { scenarios: [scenario], ...extra.fixture },
    memory: extra.memory,
    async run(d, ws) {
      await d.start();
      const bystander = d.call("never", {});
      const trigger = await observe(d.call("echo", { value: "x" }));
      const other = await observe(bystander, 1_000);
      const { left } = await closeAndCount(d, ws);
      return { outcome: `${trigger.outcome}; pending call: ${other.outcome}`, ms: trigger.ms, left };
    },
  };
}

// A fault that shows at shutdown: close() with a call pending, then what that call became.
function faultOnClose(id: string, title: string, scenario: string): Scenario {
  return {
    id,
    title,
    fixture: { scenarios: [scenario] },
    async run(d, ws) {
      await d.start();
      const pending = d.call("never", {});
      const { close, left } = await closeAndCount(d, ws);
      const call = await observe(pending, 1_000);
      return { outcome: `close(): ${close.outcome}; pending call: ${call.outcome}`, ms: close.ms, left };
    },
  };
}

const SCENARIOS: Scenario[] = [
  faultOnCall("half-line-exit", "half a line, then exit", "half-line-exit"),
  faultOnCall("non-object", "JSON that is not an object", "non-object"),
  scenario("duplicate-id", "duplicate response id", { scenarios: ["duplicate-id"] }, async (d, ws) => {
    await d.start();
    const first = await observe(d.call("echo", { value: "first" }));
    const second = await observe(d.call("echo", { value: "second" }));
    const { left } = await closeAndCount(d, ws);
    return { outcome: `first: ${first.outcome}; next: ${second.outcome}`, ms: first.ms, left };
  }),
  faultOnCall("result-and-error", "result and error together", "result-and-error"),
  faultOnCall("oversized", "50 MiB line, no newline", "oversized", { fixture: { floodBytes: 50 * MiB }, memory: true }),
  scenario("stdin-close", "server closes stdin early", { scenarios: ["stdin-close"] }, async (d, ws) => {
    const start = await observe(d.start());
    const call = await observe(d.call("echo", { value: "x" }));
    const { left } = await closeAndCount(d, ws);
    return { outcome: `start: ${start.outcome}; call: ${call.outcome}`, ms: call.ms, left };
  }),
  scenario("stderr-flood", "50 MiB stderr flood", { scenarios: ["stderr-flood"], floodBytes: 50 * MiB }, async (d, ws) => {
    await d.start();
    const began = performance.now();
    // Polled slowly: reading the reference client's tail decodes 64 KiB, and the garbage
    // of frequent polls would be charged to the client's peak memory.
    const done = await until(() => d.floodEnded(), 20_000, 50);
    const call = await observe(d.call("echo", { value: "after the flood" }));
    const kept = d.stderrKeptBytes();
    const { left } = await closeAndCount(d, ws);
    return {
      outcome: `${done ? "flood drained" : "flood not drained in 20 s"}; call: ${call.outcome}; stderr kept by the client: ${Math.round(kept / 1024)} KiB`,
      ms: Math.round(performance.now() - began),
      left,
    };
  }, { memory: true }),
  faultOnCall("stdout-pollution", "stdout pollution (console.log)", "stdout-pollution"),
  faultOnClose("ignore-sigterm", "server ignores SIGTERM", "ignore-sigterm"),
  scenario("grandchild", "grandchild holds the pipes, server exits", { scenarios: ["grandchild"] }, async (d, ws) => {
    await d.start();
    const pending = d.call("never", {});
    const exit = await observe(d.call("exit", { code: 5 }));
    const call = await observe(pending, 1_000);
    const { close, left } = await closeAndCount(d, ws);
    return { outcome: `exit call: ${exit.outcome}; pending call: ${call.outcome}; close(): ${close.outcome}`, ms: exit.ms, left };
  }),
  faultOnClose("grandchild-close", "grandchild holds the pipes, close()", "grandchild"),
  faultOnCall("notification-flood", "100,000 notifications", "notification-flood"),
  scenario("call-during-start", "call issued while the handshake runs", {}, async (d, ws) => {
    const starting = d.start();
    const call = await observe(d.call("echo", { value: "early" }));
    await starting.catch(() => {});
    const first = ws.log().find((e) => e.dir === "in")?.msg?.method ?? "nothing";
    const { left } = await closeAndCount(d, ws);
    return { outcome: `${call.outcome}; server's first message: ${first}`, ms: call.ms, left };
  }),
  scenario("abort-after-finish", "abort a long-lived signal after calls finished", {}, async (d, ws) => {
    await d.start();
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) await d.call("echo", { value: i }, { signal: controller.signal });
    const listeners = getEventListeners(controller.signal, "abort").length;
    controller.abort();
    await d.call("echo", { value: "sync" }); // everything sent before this is in the log
    const notices = received(ws, "notifications/cancelled").length;
    const { left } = await closeAndCount(d, ws);
    return { outcome: `abort listeners left: ${listeners}; cancellation notices for finished calls: ${notices}`, left };
  }),
  scenario("timeout-vs-abort", "error codes of timeout and abort", {}, async (d, ws) => {
    await d.start();
    const timeout = await observe(d.call("never", {}, { timeoutMs: 100 }));
    const controller = new AbortController();
    const aborted = d.call("never", {}, { signal: controller.signal });
    await until(() => received(ws, "tools/call").length === 2, 2_000);
    controller.abort(new Error("user stop"));
    const abort = await observe(aborted);
    const { left } = await closeAndCount(d, ws);
    return { outcome: `timeout: ${timeout.outcome}; abort: ${abort.outcome}`, left };
  }),
  scenario("second-close", "second close() while the first shuts down", { scenarios: ["ignore-sigterm"] }, async (d, ws) => {
    await d.start();
    const pid = d.pid();
    const first = d.close();
    const second = await observe(d.close(), 10_000);
    const aliveWhenSecondResolved = pid !== undefined && isAlive(pid);
    await observe(first, 10_000);
    return {
      outcome: `second close() ${second.outcome.startsWith("resolved") ? "resolved" : second.outcome} after ${second.ms} ms; server alive at that moment: ${aliveWhenSecondResolved}`,
      ms: second.ms,
      left: ws.pids().filter(isAlive).length,
    };
  }),
];

// ---- child: one scenario, one client, one process -------------------------------------------

interface ChildReport {
  row: Row;
  peakRssMiB: number;
  peakHeapGrowthMiB: number;
}

async function runChild(kind: ClientKind, id: string, dir: string): Promise<void> {
  const scenario = SCENARIOS.find((s) => s.id === id);
  if (!scenario) throw new Error(`unknown scenario ${id}`);
  const ws = workspaceAt(dir);
  const command = ws.command({ selfDestructMs: 60_000, ...scenario.fixture });
  const base = process.memoryUsage();
  let peakHeap = 0;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers);
  }, 5);
  const driver = kind === "reference" ? referenceDriver(command) : sdkDriver(command);
  let row: Row;
  try {
    row = await scenario.run(driver, ws, kind);
  } catch (error) {
    row = { outcome: `scenario failed: ${describeError(error)}`, left: ws.pids().filter(isAlive).length };
    if (process.env.FAULTS_COMPARE_DEBUG) console.error(error);
    await Promise.race([driver.close().catch(() => {}), sleep(5_000)]);
  }
  clearInterval(sampler);
  const report: ChildReport = {
    row,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    peakHeapGrowthMiB: peakHeap / MiB,
  };
  process.stdout.write(`\nFAULTS-COMPARE ${JSON.stringify(report)}\n`);
  // Whatever the client left running is the parent's to kill; exit without waiting for it.
  process.exit(0);
}

// The parent's workspace, seen from the child: same pid file and log, no cleanup (the
// parent kills and removes everything once the child has exited).
function workspaceAt(dir: string): FixtureWorkspace {
  const pidFile = join(dir, "pids.txt");
  const logFile = join(dir, "log.jsonl");
  return {
    dir,
    pidFile,
    logFile,
    command: (o = {}) => fixtureCommand({ pidFile, logFile, ...o }),
    pids: () => readPids(pidFile),
    log: () => readLog(logFile),
    state: () => readState(join(dir, "server-state")),
    firstServerSignals: () => Number(readState(join(dir, "server-state"))?.signals) || 0,
    serversNow: () => () => Number(readState(join(dir, "server-state"))?.signals) || 0,
    cleanup: async () => [],
    aliveAtClose: () => {},
  };
}

// ---- parent: every scenario × both clients, then the table ------------------------------------

async function runOne(kind: ClientKind, scenario: Scenario): Promise<ChildReport & { survivors: number }> {
  const ws = createFixtureWorkspace("lab33-compare-");
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--child", kind, scenario.id, ws.dir], {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
      child.once("error", reject);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
    const line = output.split("\n").find((l) => l.startsWith("FAULTS-COMPARE "));
    if (!line) throw new Error(`${kind}/${scenario.id}: no report (output: ${short(output, 300)})`);
    const report = JSON.parse(line.slice("FAULTS-COMPARE ".length)) as ChildReport;
    const survivors = await killAll(ws.pids());
    return { ...report, survivors: survivors.length };
  } finally {
    await ws.cleanup();
  }
}

function renderTable(results: Compared[]): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  const timing = (r: Row) => (r.ms === undefined ? "" : ` (${r.ms} ms)`);
  const lines = [
    `| Fault | This workbook's client | Official SDK client ${sdkVersion()} | Left alive after close() (ours / SDK) | Peak RSS MiB (ours / SDK) |`,
    "|---|---|---|---|---|",
  ];
  for (const { scenario, reference, sdk } of results) {
    lines.push(
      `| ${cell(scenario.title)} (\`${scenario.id}\`) | ${cell(reference.row.outcome + timing(reference.row))} | ${cell(sdk.row.outcome + timing(sdk.row))} | ${reference.row.left} / ${sdk.row.left} | ${scenario.memory ? `**${reference.peakRssMiB.toFixed(0)} / ${sdk.peakRssMiB.toFixed(0)}**` : `${reference.peakRssMiB.toFixed(0)} / ${sdk.peakRssMiB.toFixed(0)}`} |`,
    );
  }
  return lines.join("\n");
}

type Compared = { scenario: Scenario; reference: ChildReport; sdk: ChildReport };

// How to read the memory figures: what the two clients are built to do, and what this run
// measured (a comparison is stated only for the scenarios that ran).
function memoryReading(results: Compared[]): string {
  const lines = [
    "How to read it: the reference client refuses a line at `maxLineBytes` (1 MiB) before holding it whole and keeps",
    "64 KiB of stderr; the SDK client buffers what it reads until a line ends, and its stderr is the caller's job",
    "(here drained and dropped, so its stderr figure is the pipe traffic only). The fault battery",
    "(tests/hardening/faults.test.ts) checks what the reference client *retains* after a collection: under 64 KiB",
    "of tail + 4 MiB; a peak here also counts chunks V8 had not collected yet.",
  ];
  for (const r of results.filter((x) => x.scenario.memory)) {
    const ours = r.reference.peakRssMiB;
    const theirs = r.sdk.peakRssMiB;
    const relation = ours < theirs ? "lower than" : ours > theirs ? "higher than" : "the same as";
    lines.push(`In \`${r.scenario.id}\` this run measured the reference client's peak RSS ${relation} the SDK client's (${ours.toFixed(1)} vs ${theirs.toFixed(1)} MiB).`);
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--child") return runChild(args[1] as ClientKind, args[2]!, args[3]!);
  const onlyAt = args.indexOf("--only");
  const only = onlyAt === -1 ? undefined : new Set(args[onlyAt + 1]!.split(","));
  const outAt = args.indexOf("--out");
  const out = outAt === -1 ? join(ROOT, "docs", "faults-compare.md") : args[outAt + 1]!;
  const chosen = SCENARIOS.filter((s) => !only || only.has(s.id));
  const results: Compared[] = [];
  for (const scenario of chosen) {
    const reference = await runOne("reference", scenario);
    const sdk = await runOne("sdk", scenario);
    process.stderr.write(`${scenario.id}\n  ours: ${reference.row.outcome}\n  sdk:  ${sdk.row.outcome}\n`);
    results.push({ scenario, reference, sdk });
  }
  const flood = results.filter((r) => r.scenario.memory);
  const memoryLines = flood.map(
    (r) =>
      `- \`${r.scenario.id}\`: peak RSS of the client process ${r.reference.peakRssMiB.toFixed(1)} MiB (ours) vs ${r.sdk.peakRssMiB.toFixed(1)} MiB (SDK); ` +
      `peak heap + ArrayBuffer growth ${r.reference.peakHeapGrowthMiB.toFixed(1)} MiB vs ${r.sdk.peakHeapGrowthMiB.toFixed(1)} MiB.`,
  );
  const doc = `# Fault scenarios: this workbook's client vs the official MCP SDK client

<!-- Generated by \`npm run faults:compare\` (scripts/faults-compare.ts). Do not edit by hand. -->

Generated ${new Date().toISOString()} on ${platform()} ${release()}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}.

Each row starts the fixture server (\`fixtures/mcp-server.mjs\`) with one fault switched on and drives it
once with the reference client (\`labs/33-mcp-lite/solution\`, \`closeTimeoutMs\` ${CLOSE_TIMEOUT_MS}) and once with
\`@modelcontextprotocol/sdk\` ${sdkVersion()} (\`Client\` + \`StdioClientTransport\`, stderr piped and drained by the script,
requests sent with \`client.request(…, ResultSchema)\` because the fixture's echo result is not a CallToolResult).
Every run is a fresh Node process, so "peak RSS" is that process's whole peak (about 60–80 MiB of it is Node,
tsx and the loaded modules). A call that has not settled after ${WINDOW_MS / 1000} s is reported as "still pending".
"Left alive" counts the fixture's processes (server and grandchildren, from its pid file) still running
right after \`close()\` resolved; the script kills them afterwards.

${renderTable(results)}

## Memory in the 50 MiB scenarios

${memoryLines.join("\n") || "- (not run)"}

${memoryReading(results)}
`;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, doc);
  process.stderr.write(`wrote ${out}\n`);
}

await main();
