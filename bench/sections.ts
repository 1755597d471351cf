// The bench's tables: what `measure` collected (bench/run.ts), turned into sections of rows
// whose cells are medians with min–max over runs (bench/results.ts has their shape).

import type { ClientName, ServerName } from "./clients.ts";
import type { GradeSample, GradeTarget } from "./grader-timing.ts";
import type { BenchConfig, Cell, Failure, Row, Section, Unit } from "./results.ts";
import type { StartupSample } from "./startup.ts";
import { figure } from "./stats.ts";
import type { ArgResult, BurstResult, FloodResult, RttResult, Task, WorkerResult } from "./types.ts";

const MiB = 2 ** 20;

/** Everything one bench run measured. */
export interface Collected {
  workers: Map<string, Array<WorkerResult | null>>;
  startup: StartupSample[];
  grades: GradeSample[];
  failures: Failure[];
  /** Set when the time budget stopped the grades before graderRuns. */
  gradesCutShort?: string;
}

// A table's columns from { key: label }, in order.
function columns(labels: Record<string, string>): Section["columns"] {
  return Object.entries(labels).map(([key, label]) => ({ key, label }));
}

const CLIENT_COLUMNS = columns({ floor: "raw floor", reference: "reference", sdk: "SDK" });
const CLIENTS = ["floor", "reference", "sdk"] as const;
const FLOOD_CLIENTS = ["reference", "sdk"] as const;

// Every section of the report, in order.
// `graderPresent`: grader/cli.ts exists (else no grade could be measured).
export function buildSections(config: BenchConfig, collected: Collected, graderPresent: boolean): Section[] {
  const runs = runsOf(config, collected);
  return [clientSection(config, runs), pairingSection(runs), floodSection(config, runs), graderSection(config, collected, graderPresent), startupSection(config, collected)];
}

type Source<T> = (client: ClientName) => Array<T | null>;

// Each client's results of one kind of measurement, over the runs.
function runsOf(config: BenchConfig, collected: Collected) {
  const results = <T extends WorkerResult>(task: Task, client: ClientName, server: ServerName, size: number) =>
    (collected.workers.get(`${task}:${client}:${server}:${size}`) ?? []) as Array<T | null>;
  return {
    rtt: (server: ServerName): Source<RttResult> => (client) => results<RttResult>("rtt", client, server, config.rttCalls),
    burst: ((client) => results<BurstResult>("burst", client, "raw", config.burstCalls)) as Source<BurstResult>,
    arg: (size: number): Source<ArgResult> => (client) => results<ArgResult>("arg", client, "raw", size),
    flood: ((client) => results<FloodResult>("flood", client, "raw", config.floodBytes)) as Source<FloodResult>,
  };
}

type Runs = ReturnType<typeof runsOf>;

/** What a row shows: which number of each run's result, and a note on the runs. */
interface RowSpec<T> {
  unit: Unit;
  better: Row["better"];
  source: Source<T>;
  pick: (result: T) => number;
  note?: (runs: Array<T | null>) => string | undefined;
  columns?: readonly ClientName[];
}

// A row whose cells pick one number out of each run's result, one cell per client.
function row<T>(id: string, label: string, spec: RowSpec<T>): Row {
  const columns = spec.columns ?? CLIENTS;
  return { id, label, unit: spec.unit, better: spec.better, cells: Object.fromEntries(columns.map((client) => [client, cellOf(spec.source(client), spec.pick, spec.note)])) };
}

function burstNote(runs: Array<BurstResult | null>): string | undefined {
  const failing = runs.filter((run) => run && run.failures > 0);
  return failing.length ? `${failing.length} run(s) had rejected calls, e.g. ${failing[0]!.firstError}` : undefined;
}

function argNote(runs: Array<ArgResult | null>): string | undefined {
  const failing = runs.filter((run) => run && !run.ok);
  return failing.length ? `failed in ${failing.length}/${runs.length} runs: ${failing[0]!.error}` : undefined;
}

function floodNote(runs: Array<FloodResult | null>): string | undefined {
  const hung = runs.filter((run) => run && !run.failed);
  return hung.length ? `did not fail in ${hung.length}/${runs.length} runs: ${hung[0]!.error}` : undefined;
}

function clientSection(config: BenchConfig, runs: Runs): Section {
  const [small, large] = config.argBytes;
  const burst = `${config.burstCalls.toLocaleString("en-US")} calls at once`;
  const rtt = runs.rtt("raw");
  const argTime = (r: ArgResult) => (r.ok ? r.elapsedMs : Number.NaN);
  return {
    id: "clients",
    title: "Three clients, one fast echo server (bench/echo-server.mjs)",
    columns: CLIENT_COLUMNS,
    ratios: [
      ["reference", "floor"],
      ["reference", "sdk"],
    ],
    rows: [
      row("cold-start", "cold start, spawn to first tools/list answer", { unit: "ms", better: "lower", source: rtt, pick: (r) => r.coldStartMs }),
      row("rtt-median", `sequential round trip, median of ${config.rttCalls}`, { unit: "us", better: "lower", source: rtt, pick: (r) => r.roundTripUs.median }),
      row("rtt-p99", "sequential round trip, p99", { unit: "us", better: "lower", source: rtt, pick: (r) => r.roundTripUs.p99 }),
      row("burst-rate", burst, { unit: "calls/s", better: "higher", source: runs.burst, pick: (r) => r.callsPerSecond, note: burstNote }),
      row("burst-peak", `${burst}: peak RSS`, { unit: "MiB", better: "lower", source: runs.burst, pick: (r) => r.memory.peakMiB }),
      row("burst-growth", `${burst}: RSS growth`, { unit: "MiB", better: "lower", source: runs.burst, pick: (r) => r.memory.growthMiB }),
      row("arg-small-time", `${mib(small)} argument: time`, { unit: "ms", better: "lower", source: runs.arg(small), pick: argTime, note: argNote }),
      row("arg-small-growth", `${mib(small)} argument: RSS growth`, { unit: "MiB", better: "lower", source: runs.arg(small), pick: (r) => r.memory.growthMiB }),
      row("arg-large-time", `${mib(large)} argument: time`, { unit: "ms", better: "lower", source: runs.arg(large), pick: argTime, note: argNote }),
      row("arg-large-growth", `${mib(large)} argument: RSS growth`, { unit: "MiB", better: "lower", source: runs.arg(large), pick: (r) => r.memory.growthMiB }),
      row("arg-large-stall", `${mib(large)} argument: longest stall`, { unit: "ms", better: "lower", source: runs.arg(large), pick: (r) => r.maxStallMs }),
    ],
    notes: ["The reference client runs with default settings, except maxPending raised to the burst size for the burst."],
  };
}

function pairingSection(runs: Runs): Section {
  const median = (r: RttResult) => r.roundTripUs.median;
  return {
    id: "pairings",
    title: "Server cost apart from client cost: the same clients against the SDK-built server (bench/sdk-server.mjs)",
    columns: CLIENT_COLUMNS,
    ratios: [
      ["reference", "floor"],
      ["reference", "sdk"],
    ],
    rows: [
      row("pair-rtt-raw", "round trip median, raw echo server", { unit: "us", better: "lower", source: runs.rtt("raw"), pick: median }),
      row("pair-rtt-sdk", "round trip median, SDK server", { unit: "us", better: "lower", source: runs.rtt("sdk"), pick: median }),
      row("pair-cold-sdk", "cold start, SDK server", { unit: "ms", better: "lower", source: runs.rtt("sdk"), pick: (r) => r.coldStartMs }),
    ],
    notes: ["Subtracting the raw-server round trip from the SDK-server one, per client, gives the SDK server's own cost."],
  };
}

function floodSection(config: BenchConfig, runs: Runs): Section {
  const spec = { unit: "ms" as Unit, better: "lower" as const, source: runs.flood, columns: FLOOD_CLIENTS };
  return {
    id: "flood",
    title: `Hostile server: ${mib(config.floodBytes)} with no newline`,
    columns: CLIENT_COLUMNS.filter((column) => column.key !== "floor"),
    ratios: [["reference", "sdk"]],
    rows: [
      row("flood-time", "time to fail", { ...spec, pick: (r) => (r.failed ? r.timeToFailMs : Number.NaN), note: floodNote }),
      row("flood-growth", "client RSS growth", { ...spec, unit: "MiB", pick: (r) => r.memory.growthMiB }),
      row("flood-peak", "client peak RSS", { ...spec, unit: "MiB", pick: (r) => r.memory.peakMiB }),
      row("flood-stall", "longest event-loop stall", { ...spec, pick: (r) => r.maxStallMs }),
    ],
    notes: FLOOD_CLIENTS.map((client) => `${client === "sdk" ? "SDK" : client}: ${describeErrors(runs.flood(client))}`),
  };
}

/** The result's `phases` shown as rows: when each phase of a grade ended. */
const PHASES: Array<[string, string]> = [
  ["copyMs", "copy"],
  ["typecheckEndMs", "type check"],
  ["importCheckEndMs", "import check"],
  ["testsEndMs", "tests"],
  ["totalMs", "grade() total"],
];

function graderSection(config: BenchConfig, collected: Collected, graderPresent: boolean): Section {
  const before = config.baseline ? ` at ${config.baseline.commit ?? "baseline"}` : "";
  const keys: Array<[string, GradeTarget, boolean]> = [
    ["solution", "solution", false],
    ...(config.baseline ? [["solution-before", "solution", true] as [string, GradeTarget, boolean]] : []),
    ["starter", "starter", false],
    ...(config.baseline ? [["starter-before", "starter", true] as [string, GradeTarget, boolean]] : []),
  ];
  const grades = (target: GradeTarget, baseline: boolean) => collected.grades.filter((grade) => grade.target === target && Boolean(grade.baseline) === baseline);
  // Seconds, from each grade of a column; no cell where no grade has the figure.
  const secondsCell = (target: GradeTarget, baseline: boolean, pick: (sample: GradeSample) => number | undefined): Cell | undefined => {
    const values = grades(target, baseline)
      .map(pick)
      .filter((v): v is number => typeof v === "number");
    return values.length === 0 ? undefined : figure(values.map((ms) => ms / 1000));
  };
  const cells = (pick: (sample: GradeSample) => number | undefined) => Object.fromEntries(keys.map(([key, target, baseline]) => [key, secondsCell(target, baseline, pick)]));
  const notes = keys.map(([, target, baseline]) => {
    const samples = grades(target, baseline);
    const name = `${target}${baseline ? before : ""}`;
    if (samples.length === 0) return `${name}: not measured${config.graderRuns === 0 ? " (grades skipped)" : graderPresent ? " (see failed measurements)" : " (no grader/cli.ts)"}`;
    const outcomes = countBy(samples.map((sample) => `exit ${sample.exitCode}, status ${sample.status}`));
    return `${name}: ${outcomes}${collected.gradesCutShort ? ` (${collected.gradesCutShort})` : ""}`;
  });
  if (config.baseline) notes.push(`Baseline: ${config.baseline.path}${config.baseline.commit ? ` (commit ${config.baseline.commit})` : ""}, graded back to back with this checkout, alternating which goes first.`);
  return {
    id: "grader",
    title: "The grader: `npm run grade`, spawn to exit",
    columns: keys.map(([key, target, baseline]) => ({ key, label: `${target}${baseline ? before : ""}` })),
    ratios: config.baseline ? [["solution", "solution-before"], ["starter", "starter-before"]] : [],
    rows: [
      { id: "grade-time", label: "full grade, wall time", unit: "s", better: "lower", cells: cells((sample) => sample.ms) },
      { id: "grade-cpu", label: "full grade, CPU time (user+sys, whole process tree)", unit: "s", better: "lower", cells: cells((sample) => sample.cpuMs) },
      // The result's `phases`: when each phase ended, from the grade's own start (the type
      // check and the import check overlap the tests; the CLI's own start-up is the rest).
      ...PHASES.map(([key, label]): Row => ({ id: `grade-${key}`, label: `phase: ${label} ended at`, unit: "s", better: "lower", cells: cells((sample) => sample.phases?.[key]) })),
    ],
    notes,
  };
}

function startupSection(config: BenchConfig, collected: Collected): Section {
  const ms = (pick: (sample: StartupSample) => number) => figure(collected.startup.map(pick));
  return {
    id: "startup",
    title: "Fixture server start-up beside bare node",
    columns: columns({ node: 'node -e ""', fixture: "fixtures/mcp-server.mjs" }),
    ratios: [["fixture", "node"]],
    rows: [
      { id: "startup-exit", label: "spawn to exit, stdin at EOF", unit: "ms", better: "lower", cells: { node: ms((s) => s.nodeMs), fixture: ms((s) => s.fixtureMs) } },
      { id: "startup-answer", label: "spawn to initialize answer", unit: "ms", better: "lower", cells: { fixture: ms((s) => s.fixtureAnswerMs) } },
    ],
    notes: [`Each run's figure is the median of ${config.startupSamples} interleaved samples per command.`],
  };
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
