// The grade command line, as a function: npm run grade -- [--lab 33-mcp-lite] [--submission DIR | --solution] [--json FILE]
//                  [--format text|json|markdown|gradescope|exercism|junit|prairielearn] [--out FILE]
//                  [--seed N] [--lang zh|en] [--batch DIR [--workers N] [--gradebook PREFIX] [--student-pattern REGEX]]
//                  [--deadline-ms N] [--hang-ms N] [--keep] [--sandbox required|auto|off] [--from RESULT.json]
// --from re-renders a saved native result in another --format without grading again.
// Exit status: 0 pass, 1 fail, 2 could not grade (CONTRACT §2). The --json file is
// written in every case, even when grading itself broke.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runBatch } from "./batch.ts";
import { grade, loadManifest, maxScoreOf, notRunChecks } from "./grade.ts";
import type { Lang } from "./manifest.ts";
import { FORMATS, render, type Format } from "./report/index.ts";
import { exitCodeOf, type GradeResult } from "./result.ts";
import { SANDBOX_MODES, type SandboxMode } from "./sandbox/index.ts";

const USAGE = `usage: npm run grade -- [--lab 33-mcp-lite] [--submission DIR | --solution] [--json FILE]
       [--format text|json|markdown|gradescope|exercism|junit|prairielearn] [--out FILE] [--seed N] [--lang zh|en]
       [--batch DIR [--workers N] [--gradebook PREFIX] [--student-pattern REGEX]] [--deadline-ms N] [--hang-ms N] [--keep]
       [--sandbox required|auto|off]   OS sandbox for the submission (default auto)
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
    io.stderr.write(`${usage ? (error as Error).message : ((error as Error).stack ?? String(error))}\n${USAGE}\n`);
    const json = flagValue(argv, "--json");
    if (json) {
      const message = usage ? `usage: ${(error as Error).message}` : `grader failure: ${(error as Error).message}`;
      try {
        const result = await errorResult(flagValue(argv, "--lab") ?? "33-mcp-lite", message);
        writeOut(json, `${JSON.stringify(result, null, 2)}\n`);
      } catch (writeError) {
        // The --json path itself is unwritable (the usual way to land here): say so, still exit 2.
        io.stderr.write(`cannot write ${json}: ${(writeError as Error).message}\n`);
      }
    }
    return 2;
  }
}

async function main(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      lab: { type: "string", default: "33-mcp-lite" },
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
      keep: { type: "boolean", default: false },
      sandbox: { type: "string", default: "auto" },
      from: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // --lang wins; otherwise LAB_LANG=en (the same switch the lab's tests read) picks English.
  values.lang ??= process.env.LAB_LANG === "en" ? "en" : undefined;
  const lang = values.lang === undefined || values.lang === "zh" ? "zh" : values.lang === "en" ? "en" : undefined;
  if (!lang) throw new UsageError(`--lang must be zh or en, got ${values.lang}`);
  const format = values.format as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);
  const seed = values.seed === undefined ? undefined : integer("--seed", values.seed);
  if (values.solution && values.submission) throw new UsageError("give --submission or --solution, not both");
  const sandbox = values.sandbox as SandboxMode;
  if (!SANDBOX_MODES.includes(sandbox)) throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, got ${values.sandbox}`);
  const common = {
    lab: values.lab,
    lang: lang as Lang,
    seed,
    deadlineMs: values["deadline-ms"] === undefined ? undefined : integer("--deadline-ms", values["deadline-ms"], 1),
    hangMs: values["hang-ms"] === undefined ? undefined : integer("--hang-ms", values["hang-ms"], 1),
    keep: values.keep,
    sandbox,
  };

  if (values.from) {
    const saved = JSON.parse(readFileSync(resolve(values.from), "utf8")) as GradeResult;
    const text = render(values.lang === undefined ? saved : { ...saved, lang: lang as Lang }, format);
    if (values.out) writeOut(values.out, text);
    io.stdout.write(text);
    return exitCodeOf(saved.status);
  }

  if (values.batch) {
    const summary = await runBatch({
      ...common,
      dir: resolve(values.batch),
      workers: values.workers === undefined ? undefined : integer("--workers", values.workers, 1),
      gradebook: values.gradebook ? resolve(values.gradebook) : undefined,
      studentPattern: values["student-pattern"] === undefined ? undefined : pattern("--student-pattern", values["student-pattern"]),
      onResult: (name, result) => io.stderr.write(`${name}: ${result.status} ${result.score}/${result.maxScore} (${result.durationMs} ms)\n`),
    });
    io.stdout.write(`${summary.csvFile}\n${summary.jsonFile}\n`);
    return summary.results.some((r) => r.result.status === "error") ? 2 : 0;
  }

  let submission = values.submission ? resolve(values.submission) : undefined;
  if (values.solution) {
    const { manifest, labDir } = await loadManifest(values.lab!);
    submission = join(labDir, manifest.solution);
  }
  let result: GradeResult;
  try {
    result = await grade({ ...common, submission });
  } catch (error) {
    // Grading itself broke: still write a result file, and say so.
    result = {
      ...(await errorResult(values.lab!, `grader failure: ${(error as Error).stack ?? String(error)}`, seed, lang as Lang)),
      submission: submission ?? "",
    };
  }
  if (values.json) writeOut(values.json, `${JSON.stringify(result, null, 2)}\n`);
  const text = render(result, format);
  if (values.out) writeOut(values.out, text);
  io.stdout.write(text);
  return exitCodeOf(result.status);
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
  let checks: GradeResult["checks"] = [];
  let maxScore = 0;
  try {
    const { manifest } = await loadManifest(lab);
    checks = notRunChecks(manifest, lang, message);
    maxScore = maxScoreOf(manifest);
  } catch {
    // An unknown lab: there is no list of checks to report.
  }
  return {
    version: 1,
    lab,
    status: "error",
    score: 0,
    maxScore,
    bonus: { score: 0, maxScore: 0 },
    seed,
    lang,
    message,
    submission: "",
    startedAt: new Date().toISOString(),
    durationMs: 0,
    checks,
  };
}

// A flag's value on a command line that could not be parsed ("--json FILE" or "--json=FILE").
function flagValue(argv: string[], flag: string): string | undefined {
  for (const [i, arg] of argv.entries()) {
    if (arg === flag && argv[i + 1] && !argv[i + 1]!.startsWith("--")) return argv[i + 1];
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}
