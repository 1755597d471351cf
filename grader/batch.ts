// --batch DIR: grades every submission folder in DIR (each a folder with the lab's entry
// file) with a bounded pool of concurrent grades, and writes a gradebook as CSV and JSON.
// The CSV is made to be imported by a learning platform: one row per submission, the
// student identifier (from the folder name) in a column of its own, the total, the bonus,
// the points of every check in a column each, numbers as plain numbers, and no cell that a
// spreadsheet would read as a formula. docs/instructor-guide.md shows the Canvas and
// Moodle import steps.
//
// What is graded: only folders shaped like a submission. Hidden folders (`.git`, `.DS_Store`
// …) and archive debris (`__MACOSX`) are passed over silently; any other folder without the
// lab's entry file is listed in `skipped` with the reason (the console and the JSON say so;
// the CSV has rows only for graded folders). The gradebook's folder is made, and the two
// files proved writable, before the first grade starts. One submission that the grader
// cannot grade, or whose grade throws, is an `error` row; the others are still graded.

import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { grade, loadManifest, type GradeOptions } from "./grade.ts";
import { couldNotGrade, type GradeResult } from "./grade-result.ts";
import { DEFAULT_LAB, type LabManifest } from "./manifest.ts";
import { printableLine } from "./report/printable.ts";

/** Default concurrent grades: each one runs its own vitest with several workers. */
export const DEFAULT_BATCH_WORKERS = 2;
/** Written first in the CSV so that spreadsheets (Excel) read it as UTF-8, not the locale's code page. */
export const UTF8_BOM = "\uFEFF";
/** Folder names that are never submissions: what macOS's zip tool adds beside the real files. */
const ARCHIVE_DEBRIS = new Set(["__MACOSX"]);

export interface BatchOptions extends Omit<GradeOptions, "submission"> {
  dir: string;
  workers?: number;
  /** Path prefix of the gradebook files; default DIR/gradebook. */
  gradebook?: string;
  /** Regular expression whose first group takes the student identifier out of a folder name
   *  (e.g. "^lab33-(.+)$" for "lab33-<login>" folders); default: the whole name. */
  studentPattern?: string;
  /** Start the CSV with a UTF-8 byte order mark (default true). */
  bom?: boolean;
  onResult?: (name: string, result: GradeResult) => void;
  onSkip?: (name: string, reason: string) => void;
}

export interface BatchSummary {
  results: Array<{ name: string; result: GradeResult }>;
  /** Folders that were not graded, and why. */
  skipped: Array<{ name: string; reason: string }>;
  csvFile: string;
  jsonFile: string;
}

/** The batch could not start: the folder or the gradebook's location is unusable. Nothing was graded. */
export class BatchSetupError extends Error {}

export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const { manifest } = await loadManifest(options.lab ?? DEFAULT_LAB);
  const { names, skipped } = submissionFolders(options.dir, manifest.entry);
  for (const { name, reason } of skipped) options.onSkip?.(name, reason);
  const { csvFile, jsonFile } = gradebookFiles(options.gradebook ?? join(options.dir, "gradebook"));
  const results = await gradeAll(names, options, manifest);
  const csv = gradebookCsv(manifest.checks.map((c) => c.id), results, options.studentPattern);
  writeFileSync(csvFile, options.bom === false ? csv : UTF8_BOM + csv);
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ lab: manifest.id, gradedAt: new Date().toISOString(), submissions: results.map(({ name, result }) => ({ name, ...result })), skipped }, null, 2)}\n`,
  );
  return { results, skipped, csvFile, jsonFile };
}

// The folders of DIR to grade (sorted), and the ones passed over with a reason. An entry
// that is not a plain folder (a link, even one to a folder: it could name any folder on the
// machine, the reference solution's included) or whose name is not UTF-8 (a zip made with
// another code page: no path to it can be written here) is passed over, named; it never
// stops the batch.
export function submissionFolders(dir: string, entry: string): { names: string[]; skipped: Array<{ name: string; reason: string }> } {
  let entries: Buffer[];
  try {
    entries = readdirSync(dir, { encoding: "buffer" });
  } catch (error) {
    throw new BatchSetupError(`cannot read the batch folder ${dir}: ${(error as Error).message}`);
  }
  const names: string[] = [];
  const skipped: Array<{ name: string; reason: string }> = [];
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (const raw of entries) {
    let name: string;
    try {
      name = utf8.decode(raw);
    } catch {
      skipped.push({ name: printableLine(raw.toString("latin1")), reason: "its name is not UTF-8: rename the folder" });
      continue;
    }
    if (name.startsWith(".") || ARCHIVE_DEBRIS.has(name)) continue;
    const stat = lstatSync(join(dir, name), { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) skipped.push({ name, reason: "a symbolic link, not a folder" });
    else if (!stat?.isDirectory()) continue;
    else if (isSubmissionDir(join(dir, name), entry)) names.push(name);
    else skipped.push({ name, reason: `no ${entry}` });
  }
  names.sort();
  skipped.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { names, skipped };
}

// Makes the gradebook's folder and proves both files can be written there, before any grade.
function gradebookFiles(prefix: string): { csvFile: string; jsonFile: string } {
  const csvFile = `${prefix}.csv`;
  const jsonFile = `${prefix}.json`;
  try {
    mkdirSync(dirname(csvFile), { recursive: true });
    for (const file of [csvFile, jsonFile]) {
      if (existsSync(file)) accessSync(file, constants.W_OK);
      else accessSync(dirname(file), constants.W_OK);
    }
  } catch (error) {
    throw new BatchSetupError(`cannot write the gradebook (${csvFile}, ${jsonFile}): ${(error as Error).message}`);
  }
  return { csvFile, jsonFile };
}

// Grades the folders with a pool of `workers` concurrent grades; results in folder order.
async function gradeAll(names: string[], options: BatchOptions, manifest: LabManifest): Promise<Array<{ name: string; result: GradeResult }>> {
  const results: Array<{ name: string; result: GradeResult }> = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const index = next++;
      const name = names[index]!;
      const result = await gradeOne(join(options.dir, name), options, manifest);
      results[index] = { name, result };
      options.onResult?.(name, result);
    }
  };
  const size = Math.max(1, Math.min(options.workers ?? DEFAULT_BATCH_WORKERS, names.length));
  await Promise.all(Array.from({ length: size }, worker));
  return results;
}

// One folder's grade; a grade that throws is that folder's `error` result, never the batch's end.
async function gradeOne(submission: string, options: BatchOptions, manifest: LabManifest): Promise<GradeResult> {
  const startedAt = new Date().toISOString();
  try {
    return await grade({ ...options, submission });
  } catch (error) {
    const head = { lab: manifest.id, seed: options.seed ?? 0, lang: options.lang ?? "zh", submission, startedAt };
    return couldNotGrade(head, manifest, `grader failure: ${(error as Error).message ?? String(error)}`);
  }
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
// spreadsheet would run as a formula gets a leading ': =, +, -, @ (or their full-width forms)
// at the start or after leading white space, which some spreadsheets skip, and a tab or CR first.
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/;
export function csvCell(value: unknown): string {
  let text = String(value ?? "");
  if (typeof value !== "number" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// A folder is a submission when it holds the lab's entry file as a regular file (a symbolic
// link there would be refused by the grader's copy anyway).
export function isSubmissionDir(dir: string, entry: string): boolean {
  try {
    return statSync(join(dir, entry)).isFile();
  } catch {
    return false;
  }
}
