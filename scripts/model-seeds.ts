// Benchmark of the model-based probe (labs/33-mcp-lite/probes/model.test.ts), not part of
// npm test: runs it for a range of seeds against the reference solution (it must never
// fail) or against the single-defect corpus entries (each must be caught, by the dimension
// its expected.json names). One vitest run per seed and submission, one at a time.
//
//   npx tsx scripts/model-seeds.ts [--seeds 1-50] [--submission DIR | --corpus [NAME,...]] [--runs N]

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { listCorpus, materialize } from "../grader/corpus.ts";

const ROOT = join(import.meta.dirname, "..");
const LAB = join(ROOT, "labs", "33-mcp-lite");
const { values } = parseArgs({ options: { seeds: { type: "string", default: "1-50" }, submission: { type: "string" }, corpus: { type: "string" }, runs: { type: "string" } } });

function seedRange(text: string): number[] {
  const [from, to = from] = text.split("-").map(Number);
  if (!Number.isInteger(from) || !Number.isInteger(to) || to! < from!) throw new Error(`--seeds wants A-B, got ${text}`);
  return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
}

// Runs the model probe once; returns the dimensions it charged and its wall time.
function probe(submission: string, seed: number): { failed: string[]; ms: number; ok: boolean } {
  const started = Date.now();
  const env = { ...process.env, LAB_SUBMISSION: submission, LAB_SEED: String(seed), LAB_LANG: "en", ...(values.runs ? { LAB_MODEL_RUNS: values.runs } : {}) };
  const out = spawnSync("npx", ["vitest", "run", "--config", join(LAB, "vitest.config.ts"), "probes/model.test.ts"], { cwd: ROOT, env, encoding: "utf8" });
  // eslint-disable-next-line no-control-regex
  const text = `${out.stdout}${out.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
  const failed = [...new Set([...text.matchAll(/FAIL .*?(rubric\/[a-z-]+) >/g)].map((m) => m[1]!))];
  return { failed, ms: Date.now() - started, ok: out.status === 0 };
}

const seeds = seedRange(values.seeds);
const work = mkdtempSync(join(tmpdir(), "lab33-model-seeds-"));
try {
  const targets: Array<{ name: string; dir: string; expect?: string[] }> = [];
  if (values.corpus !== undefined) {
    const names = values.corpus === "" ? undefined : values.corpus.split(",");
    for (const entry of listCorpus(LAB)) {
      if (!entry.mutations || (names && !names.includes(entry.name))) continue;
      targets.push({ name: entry.name, dir: materialize(entry, join(LAB, "solution"), work), expect: entry.expected.mustFail });
    }
  } else {
    targets.push({ name: "submission", dir: values.submission ?? join(LAB, "solution") });
  }
  let bad = 0;
  for (const target of targets) {
    for (const seed of seeds) {
      const { failed, ms } = probe(target.dir, seed);
      const verdict = target.expect ? (failed.some((d) => target.expect!.includes(d)) ? "caught" : failed.length > 0 ? "WRONG DIMENSION" : "MISSED") : failed.length === 0 ? "pass" : "FAILED";
      if (!["caught", "pass"].includes(verdict)) bad += 1;
      console.log(`${target.name} seed ${seed}: ${verdict} [${failed.join(" ")}] ${ms} ms`);
    }
  }
  console.log(bad === 0 ? "all as expected" : `${bad} unexpected`);
  process.exitCode = bad === 0 ? 0 : 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
