// --batch DIR: grades every submission folder in DIR (each a folder with the lab's entry
// file) with a bounded pool of concurrent grades, and writes a gradebook as CSV and JSON.

import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { grade, loadManifest, type GradeOptions } from "./grade.ts";
import type { GradeResult } from "./result.ts";

/** Default concurrent grades: each one runs its own vitest with several workers. */
export const DEFAULT_BATCH_WORKERS = 2;

export interface BatchOptions extends Omit<GradeOptions, "submission"> {
  dir: string;
  workers?: number;
  /** Path prefix of the gradebook files; default DIR/gradebook. */
  gradebook?: string;
  onResult?: (name: string, result: GradeResult) => void;
}

export interface BatchSummary {
  results: Array<{ name: string; result: GradeResult }>;
  csvFile: string;
  jsonFile: string;
}

export async function runBatch(o: BatchOptions): Promise<BatchSummary> {
  const { manifest } = await loadManifest(o.lab ?? "33-mcp-lite");
  const names = readdirSync(o.dir)
    .filter((name) => !name.startsWith(".") && statSync(join(o.dir, name)).isDirectory())
    .sort();
  const results: Array<{ name: string; result: GradeResult }> = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const index = next++;
      const name = names[index]!;
      const result = await grade({ ...o, submission: join(o.dir, name) });
      results[index] = { name, result };
      o.onResult?.(name, result);
    }
  };
  const size = Math.max(1, Math.min(o.workers ?? DEFAULT_BATCH_WORKERS, names.length));
  await Promise.all(Array.from({ length: size }, worker));

  const prefix = o.gradebook ?? join(o.dir, "gradebook");
  const checkIds = manifest.checks.map((c) => c.id);
  const header = ["submission", "status", "score", "maxScore", "bonus", "seed", "durationMs", ...checkIds, "message"];
  const rows = results.map(({ name, result }) => {
    const byId = new Map(result.checks.map((c) => [c.id, c.status]));
    return [name, result.status, result.score, result.maxScore, result.bonus.score, result.seed, result.durationMs, ...checkIds.map((id) => byId.get(id) ?? ""), result.message ?? ""];
  });
  const csvFile = `${prefix}.csv`;
  const jsonFile = `${prefix}.json`;
  writeFileSync(csvFile, [header, ...rows].map((row) => row.map(csvCell).join(",")).join("\n") + "\n");
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ lab: manifest.id, gradedAt: new Date().toISOString(), submissions: results.map(({ name, result }) => ({ name, ...result })) }, null, 2)}\n`,
  );
  return { results, csvFile, jsonFile };
}

function csvCell(value: unknown): string {
  const text = String(value ?? "");
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function isSubmissionDir(dir: string, entry: string): boolean {
  return existsSync(join(dir, entry));
}
