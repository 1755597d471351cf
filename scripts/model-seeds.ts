// Benchmark of the model-based probe (labs/33-mcp-lite/probes/model.test.ts), not part of
// npm test: runs it for a range of seeds against the reference solution (it must never
// fail) or against the corpus's single-defect entries (mutation entries that grade fail on a
// rubric dimension: each must be caught, by a dimension its expected.json names). The other
// mutation entries (`--all`) must not be failed outside their mustFail, unless the finding
// says which TODO it needs first. One vitest run per seed and submission, one at a time, with
// the client in its own host process as in a grade (`--direct`: in the test worker).
//
//   npx tsx scripts/model-seeds.ts [--seeds 1-50] [--submission DIR | --corpus [--entries A,B] [--all]] [--runs N] [--direct]

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { listCorpus, materialize, type CorpusEntry } from "../grader/corpus.ts";

const ROOT = join(import.meta.dirname, "..");
const LAB = join(ROOT, "labs", "33-mcp-lite");
const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1-50" },
    submission: { type: "string" },
    corpus: { type: "boolean", default: false },
    entries: { type: "string" },
    all: { type: "boolean", default: false },
    runs: { type: "string" },
    direct: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});

function seedRange(text: string): number[] {
  const [from, to = from] = text.split("-").map(Number);
  if (!Number.isInteger(from) || !Number.isInteger(to) || to! < from!) throw new Error(`--seeds wants A-B, got ${text}`);
  return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
}

interface Probed {
  /** Dimensions whose model test failed, and whether that failure says which TODO it needs first. */
  failed: Array<{ dimension: string; needs: boolean }>;
  ms: number;
  text: string;
}

// Runs the model probe once; returns the dimensions it charged and its wall time.
function probe(submission: string, seed: number): Probed {
  const started = Date.now();
  // As a grade runs it (grader/grade-folders.ts): fixture servers pooled behind the relay.
  // Its socket and workspaces go in this run's folder, removed at the end (vitest ends its
  // workers with a signal, so a worker never removes its pool's socket itself).
  const env: NodeJS.ProcessEnv = { ...process.env, LAB_SUBMISSION: submission, LAB_SEED: String(seed), LAB_LANG: "en", LAB_FIXTURE_POOL: "1", LAB_FIXTURE_ROOT: fixtureRoot };
  if (values.runs) env.LAB_MODEL_RUNS = values.runs;
  if (!values.direct) env.LAB_CLIENT_HOST = "1";
  const out = spawnSync("npx", ["vitest", "run", "--config", join(LAB, "vitest.config.ts"), "probes/model.test.ts"], { cwd: ROOT, env, encoding: "utf8" });
  // eslint-disable-next-line no-control-regex
  const text = `${out.stdout}${out.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
  const dims = [...new Set([...text.matchAll(/FAIL .*?(rubric\/[a-z-]+) >/g)].map((m) => m[1]!))];
  const needs = /needs TODO\(/.test(text);
  if (out.status !== 0 && dims.length === 0) dims.push("(run error)");
  return { failed: dims.map((dimension) => ({ dimension, needs })), ms: Date.now() - started, text };
}

/** A single-defect entry: a mutation of the solution that must grade fail on a rubric dimension. */
function singleDefect(entry: CorpusEntry): boolean {
  return entry.expected.status === "fail" && entry.expected.mustFail.some((check) => check.startsWith("rubric/"));
}

// The verdict of one run against what the target expects.
function verdictOf(target: { must?: string[]; allowed?: string[]; anywhere?: boolean }, failed: Probed["failed"]): string {
  if (!target.allowed) return failed.length === 0 ? "pass" : "FAILED";
  // An entry that opts out of mustPassOthers (escaped-throw) may fail anywhere.
  const wrong = target.anywhere ? [] : failed.filter((f) => !target.allowed!.includes(f.dimension) && !f.needs);
  if (wrong.length > 0) return "WRONG DIMENSION";
  if (!target.must || target.must.length === 0) return "not charged (as allowed)";
  return failed.some((f) => target.must!.includes(f.dimension)) ? "caught" : "MISSED";
}

const seeds = seedRange(values.seeds);
const work = mkdtempSync(join(tmpdir(), "lab33-model-seeds-"));
const fixtureRoot = mkdtempSync(join(work, "f-"));
try {
  const targets: Array<{ name: string; dir: string; must?: string[]; allowed?: string[]; anywhere?: boolean }> = [];
  if (values.corpus) {
    const names = values.entries?.split(",");
    for (const entry of listCorpus(LAB)) {
      if (!entry.mutations || (names && !names.includes(entry.name))) continue;
      if (!names && !values.all && !singleDefect(entry)) continue;
      if (entry.expected.needsSandbox || entry.expected.status !== "fail") continue;
      const must = entry.expected.mustFail.filter((check) => check.startsWith("rubric/"));
      targets.push({ name: entry.name, dir: materialize(entry, join(LAB, "solution"), work), must, allowed: entry.expected.mustFail, anywhere: entry.expected.mustPassOthers === false });
    }
  } else {
    targets.push({ name: "submission", dir: values.submission ?? join(LAB, "solution") });
  }
  let bad = 0;
  for (const target of targets) {
    for (const seed of seeds) {
      const { failed, ms, text } = probe(target.dir, seed);
      const verdict = verdictOf(target, failed);
      if (!["caught", "pass", "not charged (as allowed)"].includes(verdict)) bad += 1;
      const shown = failed.map((f) => `${f.dimension}${f.needs ? " (needs)" : ""}`).join(" ");
      console.log(`${target.name} seed ${seed}: ${verdict} [${shown}] ${ms} ms`);
      if (values.verbose && verdict !== "pass" && verdict !== "caught") console.log(text);
    }
  }
  console.log(bad === 0 ? "all as expected" : `${bad} unexpected`);
  process.exitCode = bad === 0 ? 0 : 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
