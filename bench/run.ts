// `npm run bench`: the reference client beside the raw floor and the official SDK client,
// the grader's speed and the fixture's start-up, in one run. Prints the table (medians with
// min–max over runs, ratios within this run), the goals, and writes the same as JSON.
// It never asserts a time: it is a benchmark, not a test.
//
//   npm run bench [-- --quick] [--runs N] [--out FILE] [--doc FILE | --no-doc] [--no-grader]
//                 [--compare FILE] [--render FILE]
//
// --quick      tiny sizes, one run, no grades, no files unless --out/--doc (the smoke test uses it)
// --compare    also prints every figure beside the same figure in an earlier result file
// --render     only regenerates the document from an existing result file

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ClientName, ServerName } from "./clients.ts";
import { judgeGoals } from "./goals.ts";
import { graderExists, timeGrade, type GradeSample, type GradeTarget } from "./grader-timing.ts";
import { renderComparison, renderMarkdown, renderText } from "./report.ts";
import { RESULTS_SCHEMA, type BenchConfig, type BenchResults, type Cell, type Failure, type Row, type Section, type Unit } from "./results.ts";
import { measureStartup, warmStartup, type StartupSample } from "./startup.ts";
import { figure } from "./stats.ts";
import type { ArgResult, BurstResult, FloodResult, RttResult, Task, WorkerResult } from "./types.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WORKER = join(ROOT, "bench", "worker.ts");
const DEFAULT_OUT = join(ROOT, "bench", "results", "latest.json");
const DEFAULT_DOC = join(ROOT, "docs", "performance.md");
/** A worker that takes longer than this is killed and its figure reported missing. */
const WORKER_DEADLINE_MS = 90_000;
const MiB = 2 ** 20;

export const FULL_CONFIG: BenchConfig = {
  runs: 5,
  rttCalls: 2_000,
  burstCalls: 10_000,
  argBytes: [1 * MiB, 10 * MiB],
  floodBytes: 50 * MiB,
  floodDeadlineMs: 30_000,
  startupSamples: 5,
  graderRuns: 5,
  budgetS: 165,
};

export const QUICK_CONFIG: BenchConfig = {
  runs: 1,
  rttCalls: 50,
  burstCalls: 300,
  argBytes: [64 * 1024, 256 * 1024],
  // Above the reference client's 1 MiB line cap, so the flood still has to be refused.
  floodBytes: 2 * MiB,
  floodDeadlineMs: 3_000,
  startupSamples: 1,
  graderRuns: 0,
  budgetS: 165,
};

interface Job {
  key: string;
  task: Task;
  client: ClientName;
  server: ServerName;
  size: number;
}

// Jobs grouped by the worker process that runs them. Memory is measured per job as the
// peak minus the RSS before it, so a process runs only jobs in order of growing memory:
// the round trips (no memory figure), the burst alone, the small then the large argument,
// the flood alone.
function planWorkers(config: BenchConfig): Job[][] {
  const job = (task: Task, client: ClientName, server: ServerName, size: number): Job => ({
    key: `${task}:${client}:${server}:${size}`,
    task,
    client,
    server,
    size,
  });
  const workers: Job[][] = [];
  for (const client of ["floor", "reference", "sdk"] as const) {
    workers.push([job("rtt", client, "raw", config.rttCalls), job("rtt", client, "sdk", config.rttCalls)]);
    workers.push([job("burst", client, "raw", config.burstCalls)]);
    workers.push([job("arg", client, "raw", config.argBytes[0]), job("arg", client, "raw", config.argBytes[1])]);
    // The floor has no line cap: against a flood it would only buffer until the deadline.
    if (client !== "floor") workers.push([job("flood", client, "raw", config.floodBytes)]);
  }
  return workers;
}

// Runs one worker process and parses its one-line JSON answer: a result per job.
function runWorker(jobs: Job[], deadlineMs: number): Promise<WorkerResult[]> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, String(deadlineMs), ...jobs.map((job) => job.key)], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      if (stderr.length < 8_000) stderr += text;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), WORKER_DEADLINE_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").pop() ?? "";
      if (code === 0 && line.startsWith("[")) {
        resolvePromise(JSON.parse(line) as WorkerResult[]);
      } else {
        const why = signal ? `killed (${signal}${signal === "SIGKILL" ? `, over ${WORKER_DEADLINE_MS} ms` : ""})` : `exit ${code}`;
        reject(new Error(`${why}: ${lastLines(stderr)}`));
      }
    });
  });
}

// The error line of a crashed worker's stderr (or its last lines), for the failure list.
function lastLines(text: string): string {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !/MaxListenersExceeded|--trace-warnings/.test(line));
  const error = lines.find((line) => /^(\w*Error|Error)\b|^\w*Error:/.test(line));
  return (error ?? lines.slice(-3).join(" | ")).slice(0, 400) || "(no stderr)";
}

function log(text: string): void {
  process.stderr.write(`${text}\n`);
}

interface Collected {
  workers: Map<string, Array<WorkerResult | null>>;
  startup: StartupSample[];
  grades: GradeSample[];
  failures: Failure[];
  /** Set when the time budget stopped the grades before graderRuns. */
  gradesCutShort?: string;
}

// Wall time of the last solution + starter pair of grades, in ms (0 before any).
function lastGradePairMs(grades: GradeSample[]): number {
  return grades.slice(-2).reduce((sum, grade) => sum + grade.ms, 0);
}

async function measure(config: BenchConfig, withGrader: boolean): Promise<Collected> {
  const startedAt = performance.now();
  const workers = planWorkers(config);
  const collected: Collected = { workers: new Map(workers.flat().map((job) => [job.key, []])), startup: [], grades: [], failures: [] };
  warmStartup();
  for (let run = 1; run <= config.runs; run++) {
    // Rotate the order so no client always runs right after the same neighbour.
    const shift = ((run - 1) * 4) % workers.length;
    const order = [...workers.slice(shift), ...workers.slice(0, shift)];
    const began = performance.now();
    for (const jobs of order) {
      try {
        const results = await runWorker(jobs, config.floodDeadlineMs);
        jobs.forEach((job, index) => collected.workers.get(job.key)!.push(results[index] ?? null));
      } catch (error) {
        const name = jobs.map((job) => job.key).join(" + ");
        for (const job of jobs) collected.workers.get(job.key)!.push(null);
        collected.failures.push({ job: name, run, error: (error as Error).message });
        log(`  run ${run}: ${name} failed: ${(error as Error).message}`);
      }
    }
    try {
      collected.startup.push(await measureStartup(config.startupSamples));
    } catch (error) {
      collected.failures.push({ job: "startup", run, error: (error as Error).message });
    }
    log(`run ${run}/${config.runs}: ${order.length} worker processes + start-up in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  }
  if (withGrader && config.graderRuns > 0) {
    if (!graderExists(ROOT)) {
      log("grader/cli.ts does not exist: grade times not measured");
    } else {
      // Grades come last and may be cut short so the whole bench stays inside its time
      // budget; the table says how many ran.
      for (let run = 1; run <= config.graderRuns; run++) {
        const elapsedS = (performance.now() - startedAt) / 1000;
        const lastPairS = lastGradePairMs(collected.grades) / 1000;
        if (run > 1 && elapsedS + lastPairS > config.budgetS) {
          collected.gradesCutShort = `${run - 1} of ${config.graderRuns} runs: the next would pass the ${config.budgetS} s budget`;
          log(`grades stopped after ${run - 1} runs (${collected.gradesCutShort})`);
          break;
        }
        for (const target of ["solution", "starter"] as GradeTarget[]) {
          try {
            const sample = await timeGrade(ROOT, target);
            collected.grades.push(sample);
            log(`grade ${run}/${config.graderRuns} ${target}: ${(sample.ms / 1000).toFixed(2)} s, exit ${sample.exitCode}, ${sample.status}`);
          } catch (error) {
            collected.failures.push({ job: `grade:${target}`, run, error: (error as Error).message });
          }
        }
      }
    }
  }
  return collected;
}

function buildSections(config: BenchConfig, collected: Collected): Section[] {
  const results = <T extends WorkerResult>(task: Task, client: ClientName, server: ServerName, size: number) =>
    (collected.workers.get(`${task}:${client}:${server}:${size}`) ?? []) as Array<T | null>;
  const clientColumns = [
    { key: "floor", label: "raw floor" },
    { key: "reference", label: "reference" },
    { key: "sdk", label: "SDK" },
  ];
  const clients = ["floor", "reference", "sdk"] as const;

  // A row whose cells pick one number out of each run's result.
  const row = <T extends WorkerResult>(
    id: string,
    label: string,
    unit: Unit,
    better: Row["better"],
    source: (client: ClientName) => Array<T | null>,
    pick: (result: T) => number,
    note?: (runs: Array<T | null>) => string | undefined,
    columns: readonly ClientName[] = clients,
  ): Row => ({
    id,
    label,
    unit,
    better,
    cells: Object.fromEntries(columns.map((client) => [client, cellOf(source(client), pick, note)])),
  });

  const [small, large] = config.argBytes;
  const rtt = (server: ServerName) => (client: ClientName) => results<RttResult>("rtt", client, server, config.rttCalls);
  const burst = (client: ClientName) => results<BurstResult>("burst", client, "raw", config.burstCalls);
  const arg = (size: number) => (client: ClientName) => results<ArgResult>("arg", client, "raw", size);
  const flood = (client: ClientName) => results<FloodResult>("flood", client, "raw", config.floodBytes);
  const burstNote = (runs: Array<BurstResult | null>) => {
    const failing = runs.filter((run) => run && run.failures > 0);
    return failing.length ? `${failing.length} run(s) had rejected calls, e.g. ${failing[0]!.firstError}` : undefined;
  };
  const argNote = (runs: Array<ArgResult | null>) => {
    const failing = runs.filter((run) => run && !run.ok);
    return failing.length ? `failed in ${failing.length}/${runs.length} runs: ${failing[0]!.error}` : undefined;
  };
  const burstLabel = `${config.burstCalls.toLocaleString("en-US")} calls at once`;

  const clientSection: Section = {
    id: "clients",
    title: "Three clients, one fast echo server (bench/echo-server.mjs)",
    columns: clientColumns,
    ratios: [
      ["reference", "floor"],
      ["reference", "sdk"],
    ],
    rows: [
      row("cold-start", "cold start, spawn to first tools/list answer", "ms", "lower", rtt("raw"), (r) => r.coldStartMs),
      row("rtt-median", `sequential round trip, median of ${config.rttCalls}`, "us", "lower", rtt("raw"), (r) => r.roundTripUs.median),
      row("rtt-p99", "sequential round trip, p99", "us", "lower", rtt("raw"), (r) => r.roundTripUs.p99),
      row("burst-rate", burstLabel, "calls/s", "higher", burst, (r) => r.callsPerSecond, burstNote),
      row("burst-peak", `${burstLabel}: peak RSS`, "MiB", "lower", burst, (r) => r.memory.peakMiB),
      row("burst-growth", `${burstLabel}: RSS growth`, "MiB", "lower", burst, (r) => r.memory.growthMiB),
      row("arg-small-time", `${mib(small)} argument: time`, "ms", "lower", arg(small), (r) => (r.ok ? r.elapsedMs : Number.NaN), argNote),
      row("arg-small-growth", `${mib(small)} argument: RSS growth`, "MiB", "lower", arg(small), (r) => r.memory.growthMiB),
      row("arg-large-time", `${mib(large)} argument: time`, "ms", "lower", arg(large), (r) => (r.ok ? r.elapsedMs : Number.NaN), argNote),
      row("arg-large-growth", `${mib(large)} argument: RSS growth`, "MiB", "lower", arg(large), (r) => r.memory.growthMiB),
      row("arg-large-stall", `${mib(large)} argument: longest stall`, "ms", "lower", arg(large), (r) => r.maxStallMs),
    ],
    notes: [
      "The reference client runs with default settings, except maxPending raised to the burst size for the burst.",
    ],
  };

  const pairingSection: Section = {
    id: "pairings",
    title: "Server cost apart from client cost: the same clients against the SDK-built server (bench/sdk-server.mjs)",
    columns: clientColumns,
    ratios: [
      ["reference", "floor"],
      ["reference", "sdk"],
    ],
    rows: [
      row("pair-rtt-raw", "round trip median, raw echo server", "us", "lower", rtt("raw"), (r) => r.roundTripUs.median),
      row("pair-rtt-sdk", "round trip median, SDK server", "us", "lower", rtt("sdk"), (r) => r.roundTripUs.median),
      row("pair-cold-sdk", "cold start, SDK server", "ms", "lower", rtt("sdk"), (r) => r.coldStartMs),
    ],
    notes: ["Subtracting the raw-server round trip from the SDK-server one, per client, gives the SDK server's own cost."],
  };

  const floodNote = (runs: Array<FloodResult | null>) => {
    const hung = runs.filter((run) => run && !run.failed);
    return hung.length ? `did not fail in ${hung.length}/${runs.length} runs: ${hung[0]!.error}` : undefined;
  };
  const floodColumns = ["reference", "sdk"] as const;
  const floodSection: Section = {
    id: "flood",
    title: `Hostile server: ${mib(config.floodBytes)} with no newline`,
    columns: clientColumns.filter((column) => column.key !== "floor"),
    ratios: [["reference", "sdk"]],
    rows: [
      row("flood-time", "time to fail", "ms", "lower", flood, (r) => (r.failed ? r.timeToFailMs : Number.NaN), floodNote, floodColumns),
      row("flood-growth", "client RSS growth", "MiB", "lower", flood, (r) => r.memory.growthMiB, undefined, floodColumns),
      row("flood-peak", "client peak RSS", "MiB", "lower", flood, (r) => r.memory.peakMiB, undefined, floodColumns),
      row("flood-stall", "longest event-loop stall", "ms", "lower", flood, (r) => r.maxStallMs, undefined, floodColumns),
    ],
    notes: floodColumns.map((client) => `${client === "sdk" ? "SDK" : client}: ${describeErrors(flood(client))}`),
  };

  const grades = (target: GradeTarget) => collected.grades.filter((grade) => grade.target === target);
  const gradeCell = (target: GradeTarget): Cell | undefined => {
    const samples = grades(target);
    if (samples.length === 0) return undefined;
    return figure(samples.map((sample) => sample.ms / 1000));
  };
  const PHASES: Array<[string, string]> = [
    ["copyMs", "copy"],
    ["typecheckEndMs", "type check"],
    ["importCheckEndMs", "import check"],
    ["testsEndMs", "tests"],
    ["totalMs", "grade() total"],
  ];
  const phaseCell = (target: GradeTarget, key: string): Cell | undefined => {
    const values = grades(target)
      .map((sample) => sample.phases?.[key])
      .filter((v): v is number => typeof v === "number");
    return values.length === 0 ? undefined : figure(values.map((ms) => ms / 1000));
  };
  const gradeNotes = (["solution", "starter"] as const).map((target) => {
    const samples = grades(target);
    if (samples.length === 0) return `${target}: not measured${config.graderRuns === 0 ? " (grades skipped)" : graderExists(ROOT) ? " (see failed measurements)" : " (no grader/cli.ts)"}`;
    const outcomes = countBy(samples.map((sample) => `exit ${sample.exitCode}, status ${sample.status}`));
    return `${target}: ${outcomes}${collected.gradesCutShort ? ` (${collected.gradesCutShort})` : ""}`;
  });
  const graderSection: Section = {
    id: "grader",
    title: "The grader: `npm run grade`, spawn to exit",
    columns: [
      { key: "solution", label: "solution" },
      { key: "starter", label: "starter" },
    ],
    ratios: [],
    rows: [
      { id: "grade-time", label: "full grade, wall time", unit: "s", better: "lower", cells: { solution: gradeCell("solution"), starter: gradeCell("starter") } },
      // The result's `phases`: when each phase ended, from the grade's own start (the type
      // check and the import check overlap the tests; the CLI's own start-up is the rest).
      ...PHASES.map(([key, label]) => ({
        id: `grade-${key}`,
        label: `phase: ${label} ended at`,
        unit: "s" as const,
        better: "lower" as const,
        cells: { solution: phaseCell("solution", key), starter: phaseCell("starter", key) },
      })),
    ],
    notes: gradeNotes,
  };

  const startupSection: Section = {
    id: "startup",
    title: "Fixture server start-up beside bare node",
    columns: [
      { key: "node", label: 'node -e ""' },
      { key: "fixture", label: "fixtures/mcp-server.mjs" },
    ],
    ratios: [["fixture", "node"]],
    rows: [
      {
        id: "startup-exit",
        label: "spawn to exit, stdin at EOF",
        unit: "ms",
        better: "lower",
        cells: {
          node: figure(collected.startup.map((sample) => sample.nodeMs)),
          fixture: figure(collected.startup.map((sample) => sample.fixtureMs)),
        },
      },
      {
        id: "startup-answer",
        label: "spawn to initialize answer",
        unit: "ms",
        better: "lower",
        cells: { fixture: figure(collected.startup.map((sample) => sample.fixtureAnswerMs)) },
      },
    ],
    notes: [`Each run's figure is the median of ${config.startupSamples} interleaved samples per command.`],
  };

  return [clientSection, pairingSection, floodSection, graderSection, startupSection];
}

function cellOf<T>(runs: Array<T | null>, pick: (result: T) => number, note?: (runs: Array<T | null>) => string | undefined): Cell {
  const values = runs.map((run) => (run === null ? Number.NaN : pick(run)));
  const missing = runs.filter((run) => run === null).length;
  const text = [note?.(runs), missing ? `no result in ${missing}/${runs.length} runs (see failed measurements)` : undefined]
    .filter(Boolean)
    .join("; ");
  return { ...figure(values), ...(text ? { note: text } : {}) };
}

// Counts the flood outcomes by error code, with one example message per code.
function describeErrors(runs: Array<FloodResult | null>): string {
  const examples = new Map<string, string>();
  const outcomes = runs.map((run) => {
    if (!run) return "no result";
    if (!run.failed) return `did not fail (${run.error})`;
    const code = `rejected with ${run.errorCode ?? "no code"}`;
    if (!examples.has(code)) examples.set(code, (run.error ?? "").slice(0, 140));
    return code;
  });
  const example = [...examples].map(([code, message]) => `${code}, e.g. "${message}"`).join("; ");
  return `${countBy(outcomes)}${example ? ` (${example})` : ""}`;
}

function countBy(items: string[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, count]) => `${count}/${items.length} runs ${item}`).join("; ");
}

function mib(bytes: number): string {
  return bytes >= MiB ? `${+(bytes / MiB).toFixed(1)} MiB` : `${+(bytes / 1024).toFixed(1)} KiB`;
}

// Writes through a temporary file, so a reader never sees half a result.
function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      runs: { type: "string" },
      out: { type: "string" },
      doc: { type: "string" },
      "no-doc": { type: "boolean", default: false },
      "no-grader": { type: "boolean", default: false },
      compare: { type: "string" },
      render: { type: "string" },
    },
    strict: true,
  });

  if (values.render) {
    const file = resolve(values.render);
    const results = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
    const doc = resolve(values.doc ?? DEFAULT_DOC);
    writeAtomically(doc, renderMarkdown(results, relative(ROOT, file)));
    log(`wrote ${relative(ROOT, doc)}`);
    return;
  }

  const config: BenchConfig = { ...(values.quick ? QUICK_CONFIG : FULL_CONFIG) };
  if (values.runs !== undefined) {
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
    config.runs = runs;
  }
  if (values["no-grader"]) config.graderRuns = 0;

  const began = performance.now();
  const loadAverageAtStart = loadavg();
  log(`bench: ${values.quick ? "quick" : "full"} mode, ${config.runs} run(s)`);
  const collected = await measure(config, config.graderRuns > 0);
  const sections = buildSections(config, collected);
  const largeArg = collected.workers.get(`arg:reference:raw:${config.argBytes[1]}`) ?? [];
  const goals = judgeGoals({
    sections,
    config,
    referenceFlood: (collected.workers.get(`flood:reference:raw:${config.floodBytes}`) ?? []) as Array<FloodResult | null>,
    largeArgOk: (largeArg as Array<ArgResult | null>).map((run) => run?.ok ?? null),
    grades: collected.grades,
    gradesMissing:
      config.graderRuns === 0 ? (values.quick ? "quick mode does not grade" : "--no-grader") : graderExists(ROOT) ? "every grade failed to run" : "grader/cli.ts does not exist",
  });
  const cpu = cpus();
  const results: BenchResults = {
    schema: RESULTS_SCHEMA,
    date: new Date().toISOString(),
    mode: values.quick ? "quick" : "full",
    durationMs: performance.now() - began,
    machine: {
      node: process.versions.node,
      platform: process.platform,
      arch: process.arch,
      cpuModel: cpu[0]?.model.trim() ?? "unknown",
      cpus: cpu.length,
      totalMemMiB: Math.round(totalmem() / MiB),
      loadAverageAtStart,
    },
    config,
    sections,
    goals,
    failures: collected.failures,
  };

  process.stdout.write(renderText(results));
  const out = values.out ? resolve(values.out) : values.quick ? undefined : DEFAULT_OUT;
  if (out) {
    writeAtomically(out, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote ${relative(ROOT, out)}`);
  }
  const doc = values["no-doc"] ? undefined : values.doc ? resolve(values.doc) : values.quick ? undefined : DEFAULT_DOC;
  if (doc) {
    writeAtomically(doc, renderMarkdown(results, out ? relative(ROOT, out) : "(no result file)"));
    log(`wrote ${relative(ROOT, doc)}`);
  }
  if (values.compare) {
    const before = JSON.parse(readFileSync(resolve(values.compare), "utf8")) as BenchResults;
    process.stdout.write(`\n${renderComparison(before, results)}`);
  }
}

await main();
