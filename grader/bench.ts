// Wall time of full grades (a benchmark, not a test): `npx tsx grader/bench.ts [--runs 5]
// [--hang-ms N]` grades the solution and the starter --runs times each, one after the
// other, through the real CLI, and prints the figures as JSON (median, min, max in ms).

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./grade.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" }, "hang-ms": { type: "string" } } });
const runs = Number(values.runs);
const work = mkdtempSync(join(tmpdir(), "lab33-bench-"));

function timeGrade(target: "solution" | "starter", seed: number): { ms: number; status: string } {
  const json = join(work, `${target}-${seed}.json`);
  const args = [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "grader", "cli.ts"), "--json", json, "--seed", String(seed), "--format", "json"];
  if (target === "solution") args.push("--solution");
  if (values["hang-ms"]) args.push("--hang-ms", values["hang-ms"]);
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, args, { cwd: ROOT, stdio: "ignore" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { ms: Math.round(ms), status: JSON.parse(readFileSync(json, "utf8")).status };
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
  return { median, min: sorted[0], max: sorted.at(-1), samples };
}

const out: Record<string, unknown> = { runs, hangMs: values["hang-ms"] ? Number(values["hang-ms"]) : "default", cpus: (await import("node:os")).availableParallelism() };
for (const target of ["solution", "starter"] as const) {
  const results = Array.from({ length: runs }, (_, i) => timeGrade(target, i + 1));
  out[target] = { ...stats(results.map((r) => r.ms)), statuses: [...new Set(results.map((r) => r.status))] };
}
rmSync(work, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
