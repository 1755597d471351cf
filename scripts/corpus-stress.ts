// npm run corpus:stress -- [--rounds N] [--workers N] [--burners N] [--no-pin] [--only a,b] [--json FILE] [--journal FILE]
//
// Grades the reference solution and every corpus entry N rounds (default 5) while every
// core is kept busy by busy-loop burners, the grades themselves pinned to core 0 (taskset)
// where the machine has it. Reports every verdict that differs between rounds (the overall
// status, the score, or any check's status) and every grade that misses what its entry's
// expected.json asks (as the corpus tests judge it: status, checks, messages), and fails
// unless there is neither and the solution scored full marks in every round. A grader whose
// verdicts or messages depend on load shows up here.
//
// The default run takes hours. With --journal FILE every grade's verdict is appended to FILE
// as it ends; run again with the same FILE and the run goes on where it stopped, keeping the
// verdicts it had. A journal belongs to the files a grade runs (grader/, labs/, fixtures/,
// package-lock.json; documentation left out), one Node and one set of flags: it is refused for
// any other, and while those files have uncommitted changes, so its verdicts are of one grader.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { listCorpus, materialize, memoryGroupAvailable, missedExpectations, whyNotPassed, type CorpusEntry } from "../grader/corpus.ts";
import { grade, loadManifest, ROOT } from "../grader/grade.ts";
import { ownTempDir, sweepStale } from "./stress-tmp.ts";
import { removeTree } from "../grader/safe-fs.mjs";
import { GRADED_PATHS, gradedFiles, openJournal, type GradedFiles, type Journal } from "./stress-journal.ts";

interface Flags {
  rounds: number;
  workers: number;
  burners: number;
  pin: boolean;
  only: string[];
  json?: string;
  journal?: string;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = { rounds: 5, workers: 2, burners: availableParallelism(), pin: true, only: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v;
    };
    const count = (min: number) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < min) usage(`${flag} needs an integer >= ${min}`);
      return n;
    };
    if (flag === "--rounds") flags.rounds = count(1);
    else if (flag === "--workers") flags.workers = count(1);
    else if (flag === "--burners") flags.burners = count(0);
    else if (flag === "--no-pin") flags.pin = false;
    else if (flag === "--only") flags.only = value().split(",").filter(Boolean);
    else if (flag === "--json") flags.json = value();
    else if (flag === "--journal") flags.journal = value();
    else usage(`unknown argument ${flag}`);
  }
  return flags;
}

// A progress line on stderr (the report stays on stdout).
function note(text: string): void {
  process.stderr.write(`corpus:stress: ${text}\n`);
}

function usage(text: string): never {
  note(text);
  process.exit(2);
}

const flags = parseFlags(process.argv.slice(2));

// A temp dir of its own for every grade of the run (os.tmpdir() follows TMPDIR), so nothing
// else on the machine that tidies the shared temp dir can pull folders from under a grade;
// first, the dirs of earlier runs that were stopped too hard to remove their own.
if (process.env.LAB_STRESS_TMPDIR === undefined) {
  const swept = sweepStale(tmpdir());
  if (swept.removed.length > 0) note(`removed ${swept.removed.length} temp dir(s) of stopped runs: ${swept.removed.join(", ")}`);
  for (const failure of swept.failed) note(`could not remove a stopped run's temp dir: ${failure}`);
  const own = ownTempDir(tmpdir());
  process.env.LAB_STRESS_TMPDIR = own;
  process.env.TMPDIR = own;
  process.on("exit", () => removeTree(own));
}
const PINNED_ENV = "LAB_STRESS_PINNED";
const BURNERS_ENV = "LAB_STRESS_BURNERS";

// The parent keeps the cores busy and runs the grading part pinned to core 0; the pinned
// child (same script, env marked) does the grading.
if (flags.pin && process.env[PINNED_ENV] !== "1" && process.platform === "linux" && hasTaskset()) {
  const burners = startBurners(flags.burners);
  const self = fileURLToPath(import.meta.url);
  const child = spawn("taskset", ["-c", "0", process.execPath, ...process.execArgv, self, ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, [PINNED_ENV]: "1", [BURNERS_ENV]: String(burners.length) },
  });
  const stop = () => child.kill("SIGTERM");
  process.on("SIGINT", stop).on("SIGTERM", stop);
  const code = await new Promise<number>((resolve) => child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  stopBurners(burners);
  process.exit(code);
}

const burners = process.env[PINNED_ENV] === "1" ? [] : startBurners(flags.burners);
try {
  process.exitCode = await run(flags);
} finally {
  stopBurners(burners);
}

function hasTaskset(): boolean {
  return spawnSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" }).status === 0;
}

function startBurners(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
}

function stopBurners(burners: ChildProcess[]): void {
  for (const b of burners) b.kill("SIGKILL");
}

interface Verdict {
  status: string;
  /** The grade's message when it could not grade (status error). */
  message?: string;
  score: number;
  maxScore: number;
  checks: Record<string, string>;
  /** Why each check that did not pass did not (its message and its failing tests'), to explain a flip. */
  why?: Record<string, string>;
  /** What the grade got wrong against its corpus entry's expected.json (none for the solution). */
  misses?: string[];
  ms: number;
}

async function run(f: Flags): Promise<number> {
  const { manifest, labDir } = await loadManifest("33-mcp-lite");
  const work = mkdtempSync(join(tmpdir(), "lab33-stress-"));
  try {
    const entries = [
      { name: "solution", dir: join(labDir, manifest.solution), homework: false, deadlineMs: undefined as number | undefined, memoryMb: undefined as number | undefined, entry: undefined as CorpusEntry | undefined },
      // Each entry with its own overall deadline, as the corpus tests grade it: an entry that
      // needs longer (heap-exhaustion) would otherwise be cut off at whatever test it reached.
      // (An entry that needs a memory group is left out where the grader can make none.)
      ...listCorpus(labDir).filter((e) => !e.expected.needsMemoryGroup || memoryGroupAvailable()).map((e) => ({
        name: e.name, dir: materialize(e, join(labDir, manifest.solution), work), homework: e.expected.homework === true, deadlineMs: e.expected.deadlineMs, memoryMb: e.expected.memoryMb, entry: e,
      })),
    ].filter((e) => f.only.length === 0 || f.only.includes(e.name));
    const checkIds = manifest.checks.map((c) => c.id);
    const pinned = process.env[PINNED_ENV] === "1" ? "pinned to core 0" : "not pinned";
    const burning = process.env[BURNERS_ENV] ?? String(f.burners);
    console.log(`corpus:stress: ${entries.length} submissions x ${f.rounds} rounds, ${f.workers} at a time, ${burning} burner(s) on ${cpus().length} core(s), grades ${pinned}`);
    const verdicts = new Map<string, Verdict[]>(entries.map((e) => [e.name, []]));
    const tree = gradedFiles(ROOT);
    const journal = f.journal ? startJournal(f.journal, f, tree, entries.map((e) => e.name)) : undefined;
    const started = Date.now();
    for (let round = 1; round <= f.rounds; round++) {
      const kept = journal?.rounds.get(round) ?? new Map<string, Verdict>();
      const queue = entries.filter((e) => !kept.has(e.name));
      let done = entries.length - queue.length;
      if (done > 0) note(`round ${round}/${f.rounds}: ${done} verdict(s) from the journal`);
      const worker = async () => {
        for (let e = queue.shift(); e; e = queue.shift()) {
          const t0 = Date.now();
          const r = await grade({ submission: e.dir, seed: 3, lang: "en", homework: e.homework, deadlineMs: e.deadlineMs, memoryMb: e.memoryMb });
          const checks = Object.fromEntries(r.checks.map((c) => [c.id, c.status]));
          const verdict: Verdict = { status: r.status, score: r.score, maxScore: r.maxScore, checks, ms: Date.now() - t0 };
          if (r.status === "error" && r.message) verdict.message = r.message.slice(0, 400);
          const why = r.checks.filter((c) => c.status !== "pass").map((c) => [c.id, whyNotPassed(c).slice(0, 1_000)]);
          if (why.length > 0) verdict.why = Object.fromEntries(why);
          const misses = e.entry ? missedExpectations(e.entry, r, "auto", checkIds) : [];
          if (misses.length > 0) verdict.misses = misses.map((m) => m.slice(0, 1_000));
          kept.set(e.name, verdict);
          journal?.record(round, e.name, verdict);
          // One line per grade as it ends, so a run stopped early (it takes hours) still shows
          // every verdict it reached.
          done += 1;
          note(`round ${round}/${f.rounds}, ${done}/${entries.length}: ${e.name} ${r.status} ${r.score}/${r.maxScore} in ${verdict.ms} ms${misses.length > 0 ? `, MISSED: ${misses.join("; ")}` : ""}`);
          // With LAB_HANG_TRACE=1, where the time of every wait the hang clock called hung went (tests/support.ts).
          for (const trace of JSON.stringify(r).match(/\[trace [^\]]*\]/g) ?? []) note(`  ${e.name}, round ${round}: ${trace}`);
        }
      };
      await Promise.all(Array.from({ length: f.workers }, worker));
      for (const e of entries) verdicts.get(e.name)!.push(kept.get(e.name)!);
      console.log(`round ${round}/${f.rounds} done after ${Math.round((Date.now() - started) / 1000)} s`);
    }

    const flips: string[] = [];
    for (const [name, rounds] of verdicts) {
      const ids = new Set(rounds.flatMap((r) => Object.keys(r.checks)));
      const differ = (get: (v: Verdict) => unknown) => new Set(rounds.map((r) => JSON.stringify(get(r)))).size > 1;
      if (differ((v) => v.status)) {
        const why = rounds.find((r) => r.status === "error" && r.message)?.message;
        flips.push(`${name}: status ${rounds.map((r) => r.status).join(" / ")}${why ? ` (error: ${why})` : ""}`);
      }
      if (differ((v) => v.score)) flips.push(`${name}: score ${rounds.map((r) => r.score).join(" / ")}`);
      for (const id of ids) {
        if (!differ((v) => v.checks[id])) continue;
        const why = rounds.find((r) => r.checks[id] !== "pass" && r.why?.[id])?.why?.[id];
        flips.push(`${name}: ${id} ${rounds.map((r) => r.checks[id] ?? "-").join(" / ")}${why ? ` (${why})` : ""}`);
      }
    }
    const missed = [...verdicts].flatMap(([name, rounds]) => rounds.flatMap((v, i) => (v.misses ?? []).map((m) => `${name}, round ${i + 1}: ${m}`)));
    const solution = verdicts.get("solution") ?? [];
    const solutionShort = solution.filter((v) => v.status !== "pass" || v.score !== v.maxScore);
    const times = [...verdicts.values()].flat().map((v) => v.ms).sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)] ?? 0;
    const graded = [...verdicts.values()].flat().reduce((sum, v) => sum + v.ms, 0);
    console.log("");
    for (const [name, rounds] of verdicts) {
      console.log(`${name.padEnd(28)} ${rounds.map((r) => `${r.status} ${r.score}/${r.maxScore}`).join(" | ")}`);
    }
    console.log("");
    console.log(`grades: ${times.length}, median ${median} ms, max ${times[times.length - 1] ?? 0} ms, total ${Math.round((Date.now() - started) / 1000)} s${journal?.resumed ? ` in this run (${journal.resumed} grade(s) from the journal; ${Math.round(graded / 1000)} s of grading in all)` : ""}`);
    console.log(`solution: ${solution.map((v) => `${v.score}/${v.maxScore}`).join(", ")}`);
    console.log(flips.length === 0 ? "flips: 0" : `flips: ${flips.length}\n  ${flips.join("\n  ")}`);
    console.log(missed.length === 0 ? "expectations missed: 0" : `expectations missed: ${missed.length}\n  ${missed.join("\n  ")}`);
    if (f.json) writeFileSync(f.json, `${JSON.stringify({ flags: f, tree: { head: tree.head, files: tree.files, dirty: tree.dirty, node: process.version }, flips, missed, verdicts: Object.fromEntries(verdicts) }, null, 2)}\n`);
    return flips.length === 0 && missed.length === 0 && solutionShort.length === 0 ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// The run's journal (--journal): refused, with the reason, while the graded files have
// uncommitted changes or when the file belongs to another run.
function startJournal(file: string, f: Flags, tree: GradedFiles, names: string[]): Journal<Verdict> {
  if (tree.dirty) usage(`--journal: ${GRADED_PATHS.join(", ")} have uncommitted changes; commit them first, so the journal's verdicts are of one grader`);
  // (The burners are the parent's count: the pinned child sees one core.)
  const identity = { tree: { files: tree.files, node: process.version }, flags: { workers: f.workers, burners: Number(process.env[BURNERS_ENV] ?? f.burners), pin: f.pin, only: f.only } };
  try {
    const journal = openJournal<Verdict>(file, identity, f.rounds, names, tree.head);
    if (journal.resumed > 0) note(`--journal: ${journal.resumed} verdict(s) kept from ${file}`);
    return journal;
  } catch (error) {
    usage((error as Error).message);
  }
}
