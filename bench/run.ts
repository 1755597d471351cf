// `npm run bench`: the reference client beside the raw floor and the official SDK client,
// the grader's speed and the fixture's start-up, in one run. Prints the table (medians with
// min–max over runs, ratios within this run), the goals, and writes the same as JSON.
// It never asserts a time: it is a benchmark, not a test.
//
//   npm run bench [-- --quick] [--runs N] [--out FILE] [--doc FILE | --no-doc] [--no-grader]
//                 [--compare FILE] [--render FILE] [--baseline DIR]
//
// --quick      tiny sizes, one run, no grades, no files unless --out/--doc (the smoke test uses it)
// --compare    also prints every figure beside the same figure in an earlier result file
// --render     only regenerates the document from an existing result file
// --baseline   (or BENCH_BASELINE=DIR) another checkout of the project, npm ci'd: each grade is
//              paired with the same grade there, and the grader table gets "before" columns

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ClientName, ServerName } from "./clients.ts";
import { judgeGoals } from "./goals.ts";
import { graderExists, measureGrades, resolveBaseline } from "./grader-timing.ts";
import { renderComparison, renderMarkdown, renderText } from "./report.ts";
import { RESULTS_SCHEMA, type BenchConfig, type BenchResults } from "./results.ts";
import { buildSections, type Collected } from "./sections.ts";
import { measureStartup, warmStartup } from "./startup.ts";
import type { ArgResult, FloodResult, Task, WorkerResult } from "./types.ts";

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


async function measure(config: BenchConfig, withGrader: boolean): Promise<Collected> {
  const startedAt = performance.now();
  const workers = planWorkers(config);
  const collected: Collected = { workers: new Map(workers.flat().map((job) => [job.key, []])), startup: [], grades: [], failures: [] };
  warmStartup();
  for (let run = 1; run <= config.runs; run++) await measureRun(config, workers, run, collected);
  if (withGrader && config.graderRuns > 0) {
    if (!graderExists(ROOT)) log("grader/cli.ts does not exist: grade times not measured");
    else await gradeRounds(config, startedAt, collected);
  }
  return collected;
}

// One run of every worker process, then the fixture's start-up.
async function measureRun(config: BenchConfig, workers: Job[][], run: number, collected: Collected): Promise<void> {
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

// Grades come last and may be cut short so the whole bench stays inside its time budget
// (twice the budget with a baseline, whose grades double the count); the table says how many ran.
async function gradeRounds(config: BenchConfig, startedAt: number, collected: Collected): Promise<void> {
  const budgetS = config.baseline ? 2 * config.budgetS : config.budgetS;
  const runs = await measureGrades({ root: ROOT, runs: config.graderRuns, baseline: config.baseline, budgetS, startedAt, log });
  collected.grades.push(...runs.grades);
  collected.failures.push(...runs.failures);
  if (runs.cutShort) collected.gradesCutShort = runs.cutShort;
}

// Writes through a temporary file, so a reader never sees half a result.
function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

const FLAGS = {
  quick: { type: "boolean", default: false },
  runs: { type: "string" },
  out: { type: "string" },
  doc: { type: "string" },
  "no-doc": { type: "boolean", default: false },
  "no-grader": { type: "boolean", default: false },
  compare: { type: "string" },
  render: { type: "string" },
  baseline: { type: "string" },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; strict: true }>>["values"];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: FLAGS, strict: true });
  if (values.render) return renderOnly(values.render, values.doc);
  const config: BenchConfig = { ...(values.quick ? QUICK_CONFIG : FULL_CONFIG) };
  if (values.runs !== undefined) {
    const runs = Number(values.runs);
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
    config.runs = runs;
  }
  if (values["no-grader"]) config.graderRuns = 0;
  const baseline = resolveBaseline(values.baseline ?? process.env.BENCH_BASELINE);
  if (baseline) config.baseline = baseline;
  const results = await runBench(config, values.quick);
  process.stdout.write(renderText(results));
  writeOutputs(results, values);
  if (values.compare) {
    const before = JSON.parse(readFileSync(resolve(values.compare), "utf8")) as BenchResults;
    process.stdout.write(`\n${renderComparison(before, results)}`);
  }
}

// --render: only the document, from an existing result file.
function renderOnly(resultFile: string, docFlag: string | undefined): void {
  const file = resolve(resultFile);
  const results = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
  const doc = resolve(docFlag ?? DEFAULT_DOC);
  writeAtomically(doc, renderMarkdown(results, relative(ROOT, file)));
  log(`wrote ${relative(ROOT, doc)}`);
}

// Measures everything, and judges the goals on what was measured.
async function runBench(config: BenchConfig, quick: boolean): Promise<BenchResults> {
  const began = performance.now();
  const loadAverageAtStart = loadavg();
  log(`bench: ${quick ? "quick" : "full"} mode, ${config.runs} run(s)`);
  const collected = await measure(config, config.graderRuns > 0);
  const sections = buildSections(config, collected, graderExists(ROOT));
  const largeArg = collected.workers.get(`arg:reference:raw:${config.argBytes[1]}`) ?? [];
  const goals = judgeGoals({
    sections,
    config,
    referenceFlood: (collected.workers.get(`flood:reference:raw:${config.floodBytes}`) ?? []) as Array<FloodResult | null>,
    largeArgOk: (largeArg as Array<ArgResult | null>).map((run) => run?.ok ?? null),
    grades: collected.grades,
    gradesMissing:
      config.graderRuns === 0 ? (quick ? "quick mode does not grade" : "--no-grader") : graderExists(ROOT) ? "every grade failed to run" : "grader/cli.ts does not exist",
  });
  const cpu = cpus();
  return {
    schema: RESULTS_SCHEMA,
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
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
}

// The result file and the document, where the flags (or the mode's defaults) ask for them.
function writeOutputs(results: BenchResults, values: Flags): void {
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
}

await main();
