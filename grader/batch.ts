// --batch DIR: grades every submission folder in DIR (each a folder with the lab's entry
// file) with a bounded pool of concurrent grades, and writes a gradebook as CSV and JSON.
// The CSV is made to be imported by a learning platform: one row per submission, the
// student identifier (from the folder name) in a column of its own, the total, the bonus,
// the points of every check in a column each, numbers as plain numbers, and no cell that a
// spreadsheet would read as a formula. docs/instructor-guide.md shows the Canvas and
// Moodle import steps.

import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { grade, loadManifest, type GradeOptions } from "./grade.ts";
import { DEFAULT_LAB } from "./manifest.ts";
import type { GradeResult } from "./grade-result.ts";

/** Default concurrent grades: each one runs its own vitest with several workers. */
export const DEFAULT_BATCH_WORKERS = 2;

export interface BatchOptions extends Omit<GradeOptions, "submission"> {
  dir: string;
  workers?: number;
  /** Path prefix of the gradebook files; default DIR/gradebook. */
  gradebook?: string;
  /** Regular expression whose first group takes the student identifier out of a folder name
   *  (e.g. "^lab33-(.+)$" for GitHub Classroom's "lab33-<login>"); default: the whole name. */
  studentPattern?: string;
  onResult?: (name: string, result: GradeResult) => void;
}

export interface BatchSummary {
  results: Array<{ name: string; result: GradeResult }>;
  csvFile: string;
  jsonFile: string;
}

export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const { manifest } = await loadManifest(options.lab ?? DEFAULT_LAB);
  const names = readdirSync(options.dir)
    .filter((name) => !name.startsWith(".") && statSync(join(options.dir, name)).isDirectory())
    .sort();
  const results: Array<{ name: string; result: GradeResult }> = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const index = next++;
      const name = names[index]!;
      const result = await grade({ ...options, submission: join(options.dir, name) });
      results[index] = { name, result };
      options.onResult?.(name, result);
    }
  };
  const size = Math.max(1, Math.min(options.workers ?? DEFAULT_BATCH_WORKERS, names.length));
  await Promise.all(Array.from({ length: size }, worker));

  const prefix = options.gradebook ?? join(options.dir, "gradebook");
  const csvFile = `${prefix}.csv`;
  const jsonFile = `${prefix}.json`;
  writeFileSync(csvFile, gradebookCsv(manifest.checks.map((c) => c.id), results, options.studentPattern));
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ lab: manifest.id, gradedAt: new Date().toISOString(), submissions: results.map(({ name, result }) => ({ name, ...result })) }, null, 2)}\n`,
  );
  return { results, csvFile, jsonFile };
}

/** Columns before the per-check points. */
export const GRADEBOOK_COLUMNS = ["student", "submission", "status", "total", "max", "bonus", "bonusMax"] as const;

// The gradebook as CSV text: the fixed columns, one column per graded check of the lab, one
// per homework check any submission reported, then seed, duration and message.
export function gradebookCsv(checkIds: string[], results: Array<{ name: string; result: GradeResult }>, studentPattern?: string): string {
  const pattern = studentPattern ? new RegExp(studentPattern) : undefined;
  const homeworkIds = [...new Set(results.flatMap(({ result }) => result.checks.filter((c) => c.kind === "homework").map((c) => c.id)))].sort();
  const ids = [...checkIds, ...homeworkIds];
  const header = [...GRADEBOOK_COLUMNS, ...ids, "seed", "durationMs", "message"];
  const rows = results.map(({ name, result }) => {
    const points = new Map(result.checks.map((c) => [c.id, c.score]));
    const student = pattern?.exec(name)?.[1] ?? name;
    return [student, name, result.status, result.score, result.maxScore, result.bonus.score, result.bonus.maxScore, ...ids.map((id) => points.get(id) ?? ""), result.seed, result.durationMs, result.message ?? ""];
  });
  return [header, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

// One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break; text that a
// spreadsheet would run as a formula (=, +, -, @, tab, CR at the start) gets a leading '.
export function csvCell(value: unknown): string {
  let text = String(value ?? "");
  if (typeof value !== "number" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function isSubmissionDir(dir: string, entry: string): boolean {
  return existsSync(join(dir, entry));
}
