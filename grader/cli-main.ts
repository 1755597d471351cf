// The grade command line, as a function (its flags: USAGE below). --from re-renders a saved
// native result in another --format without grading again. Exit status: 0 pass, 1 fail,
// 2 could not grade (CONTRACT §2). The --json file is written in every case, even when
// grading itself broke.

import { printableLine } from "./report/printable.ts";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { BatchSetupError, runBatch } from "./batch.ts";
import { grade, loadManifest } from "./grade.ts";
import { couldNotGrade, exitCodeOf, type GradeResult } from "./grade-result.ts";
import { DEFAULT_LAB, type Lang } from "./manifest.ts";
import { FORMATS, render, type Format } from "./report/index.ts";
import { SANDBOX_MODES, type SandboxMode } from "./sandbox/index.ts";

/** The command line, written once: --help prints it, a usage error prints it after the error. */
export const USAGE = `usage: npm run grade -- [--lab ${DEFAULT_LAB}] [--submission DIR | --solution] [--json FILE]
       [--format text|json|markdown|gradescope|exercism|junit|prairielearn] [--out FILE] [--seed N] [--lang zh|en]
       [--batch DIR [--workers N] [--gradebook PREFIX] [--student-pattern REGEX]] [--deadline-ms N] [--hang-ms N] [--test-workers N] [--keep]
       [--sandbox required|auto|off]   OS sandbox for the submission (default auto)
       [--memory-mb N]   memory limit of each grade as a whole, where a control group can be made (default 3072; 0: none)
       [--from RESULT.json]   re-render a saved --json result in another --format`;

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

// Runs the grade command line and returns its exit status. Never throws: a usage error is
// exit 2 with the usage text, and the --json result file is still written when one was named.
export async function runCli(argv: string[], io: CliIo = process): Promise<number> {
  try {
    return await main(argv, io);
  } catch (error) {
    // node:util parseArgs throws ERR_PARSE_ARGS_* for unknown flags, stray arguments and missing values.
    const usage = error instanceof UsageError || String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_");
    // The usage text only where the command line itself was wrong.
    io.stderr.write(usage ? `${(error as Error).message}\n${USAGE}\n` : `${(error as Error).stack ?? String(error)}\n`);
    const json = flagValue(argv, "--json");
    if (json) {
      const message = usage ? `usage: ${(error as Error).message}` : `grader failure: ${(error as Error).message}`;
      try {
        const result = await errorResult(flagValue(argv, "--lab") ?? DEFAULT_LAB, message);
        writeOut(json, `${JSON.stringify(result, null, 2)}\n`);
      } catch (writeError) {
        // The --json path itself is unwritable (the usual way to land here): say so, still exit 2.
        io.stderr.write(`cannot write ${json}: ${(writeError as Error).message}\n`);
      }
    }
    return 2;
  }
}

const OPTIONS = {
  lab: { type: "string", default: DEFAULT_LAB },
  submission: { type: "string" },
  solution: { type: "boolean", default: false },
  json: { type: "string" },
  format: { type: "string", default: "text" },
  out: { type: "string" },
  seed: { type: "string" },
  lang: { type: "string" },
  batch: { type: "string" },
  workers: { type: "string" },
  gradebook: { type: "string" },
  "student-pattern": { type: "string" },
  "deadline-ms": { type: "string" },
  "hang-ms": { type: "string" },
  "test-workers": { type: "string" },
  "memory-mb": { type: "string" },
  keep: { type: "boolean", default: false },
  sandbox: { type: "string", default: "auto" },
  from: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

type Flags = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; strict: true; allowPositionals: false }>>["values"];

async function main(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { common, format, lang, langChosen } = checkFlags(values);
  if (values.from) return rerender(values.from, langChosen ? lang : undefined, format, values.out, io);
  if (values.batch) return gradeBatch(values, common, io).catch((error: unknown) => {
    // The batch could not start (its folder or the gradebook's): one line, not a stack or the usage.
    if (!(error instanceof BatchSetupError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  });
  const result = await gradeOne(values, common);
  if (values.json) writeOut(values.json, `${JSON.stringify(result, null, 2)}\n`);
  const text = render(result, format);
  if (values.out) writeOut(values.out, text);
  io.stdout.write(text);
  return exitCodeOf(result.status);
}

// Checks the flags' values and turns them into the options every grade shares.
function checkFlags(values: Flags) {
  // --lang wins; otherwise LAB_LANG=en (the same switch the lab's tests read) picks English.
  const langFlag = values.lang ?? (process.env.LAB_LANG === "en" ? "en" : undefined);
  const lang: Lang | undefined = langFlag === undefined || langFlag === "zh" ? "zh" : langFlag === "en" ? "en" : undefined;
  if (!lang) throw new UsageError(`--lang must be zh or en, got ${langFlag}`);
  const format = values.format as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);
  const seed = values.seed === undefined ? undefined : integer("--seed", values.seed);
  if (values.solution && values.submission) throw new UsageError("give --submission or --solution, not both");
  const sandbox = values.sandbox as SandboxMode;
  if (!SANDBOX_MODES.includes(sandbox)) throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, got ${values.sandbox}`);
  const common = {
    lab: values.lab,
    lang,
    seed,
    deadlineMs: values["deadline-ms"] === undefined ? undefined : integer("--deadline-ms", values["deadline-ms"], 1),
    hangMs: values["hang-ms"] === undefined ? undefined : integer("--hang-ms", values["hang-ms"], 1),
    testWorkers: values["test-workers"] === undefined ? undefined : integer("--test-workers", values["test-workers"], 1),
    memoryMb: values["memory-mb"] === undefined ? undefined : integer("--memory-mb", values["memory-mb"], 0),
    keep: values.keep,
    sandbox,
  };
  return { common, format, lang, langChosen: langFlag !== undefined };
}

type Common = ReturnType<typeof checkFlags>["common"];

// --from: a saved native result in another format (and language, when --lang was given).
function rerender(from: string, lang: Lang | undefined, format: Format, out: string | undefined, io: CliIo): number {
  const saved = JSON.parse(readFileSync(resolve(from), "utf8")) as GradeResult;
  const text = render(lang === undefined ? saved : { ...saved, lang }, format);
  if (out) writeOut(out, text);
  io.stdout.write(text);
  return exitCodeOf(saved.status);
}

// --batch: every submission folder of a directory, and a gradebook.
async function gradeBatch(values: Flags, common: Common, io: CliIo): Promise<number> {
  const summary = await runBatch({
    onSkip: (name, reason) => io.stderr.write(`${printableLine(name)}: skipped (${reason})\n`),
    ...common,
    dir: resolve(values.batch!),
    workers: values.workers === undefined ? undefined : integer("--workers", values.workers, 1),
    gradebook: values.gradebook ? resolve(values.gradebook) : undefined,
    studentPattern: values["student-pattern"] === undefined ? undefined : pattern("--student-pattern", values["student-pattern"]),
    onResult: (name, result) => io.stderr.write(`${printableLine(name)}: ${result.status} ${result.score}/${result.maxScore} (${result.durationMs} ms)\n`),
  });
  io.stdout.write(`${summary.csvFile}\n${summary.jsonFile}\n`);
  if (summary.skipped.length > 0) io.stderr.write(`${summary.skipped.length} folder(s) not graded: ${summary.skipped.map((s) => printableLine(s.name)).join(", ")}\n`);
  return summary.results.some((r) => r.result.status === "error") ? 2 : 0;
}

// One submission (or the solution, or the starter); a grader failure is still a result.
async function gradeOne(values: Flags, common: Common): Promise<GradeResult> {
  let submission = values.submission ? resolve(values.submission) : undefined;
  if (values.solution) {
    const { manifest, labDir } = await loadManifest(values.lab);
    submission = join(labDir, manifest.solution);
  }
  try {
    return await grade({ ...common, submission });
  } catch (error) {
    // Grading itself broke: still write a result file, and say so.
    return { ...(await errorResult(values.lab, `grader failure: ${(error as Error).stack ?? String(error)}`, common.seed, common.lang)), submission: submission ?? "" };
  }
}

class UsageError extends Error {}

// Parses a whole-number flag; `min` is 0 for a seed and 1 for durations and counts.
function integer(flag: string, value: string, min = 0): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min) {
    throw new UsageError(`${flag} needs ${min === 0 ? "a non-negative" : "a positive"} integer, got ${JSON.stringify(value)}`);
  }
  return n;
}

// A regular expression flag: it must compile and have a capture group.
function pattern(flag: string, value: string): string {
  let groups: number;
  try {
    groups = new RegExp(`${value}|`).exec("")!.length - 1;
  } catch (error) {
    throw new UsageError(`${flag} is not a regular expression: ${(error as Error).message}`);
  }
  if (groups < 1) throw new UsageError(`${flag} needs a capture group, e.g. "^lab33-(.+)$", got ${JSON.stringify(value)}`);
  return value;
}

function writeOut(file: string, text: string): void {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

// The result written when nothing could be graded (bad flags, or the grader itself broke).
// Every check id the lab defines is still listed, as an error, when the lab can be loaded.
async function errorResult(lab: string, message: string, seed = 0, lang: Lang = "zh"): Promise<GradeResult> {
  const manifest = await loadManifest(lab).then(
    (loaded) => loaded.manifest,
    // An unknown lab: there is no list of checks to report.
    () => undefined,
  );
  return couldNotGrade({ lab, seed, lang, submission: "", startedAt: new Date().toISOString() }, manifest, message);
}

// A flag's value on a command line that could not be parsed ("--json FILE" or "--json=FILE").
function flagValue(argv: string[], flag: string): string | undefined {
  for (const [i, arg] of argv.entries()) {
    if (arg === flag && argv[i + 1] && !argv[i + 1]!.startsWith("--")) return argv[i + 1];
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}
