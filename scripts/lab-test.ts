// The learner's loop: `npm run lab:starter` (or `npx tsx scripts/lab-test.ts <starter|solution|DIR>`)
// runs a lab's evidence tests against one folder, safely:
//   1. type check first: the compiler's errors are printed once, as it prints them, and
//      nothing runs until they are fixed;
//   2. the grader's import check: a throw or an endless loop at module top level is reported
//      with its file and line instead of hanging the run;
//   3. the evidence tests in vitest, under a wall-clock limit (default 90 s, `--limit-s N`):
//      a test that never ends (a `for (;;)`, a close() that never resolves) is reported by
//      name and the run is stopped, never waited on forever.
// Options: --lab <id or number> (default: DEFAULT_LAB of grader/manifest.ts), --lang zh|en (or LAB_LANG=en),
// --watch (reruns the whole safe run, type check first, whenever a file of the folder changes;
// needs a terminal, else it says so and runs once: scripts/lab-watch.ts),
// --limit-s N, --no-typecheck. Anything else goes to vitest, so
// `npm run lab:starter -- timeout` runs only tests/evidence/timeout.test.ts.
// Exit status: 0 all tests passed, 1 a test failed or the run was stopped, 2 the folder
// cannot be tested (no entry file, type errors, import failed).
import { spawn, type StdioOptions } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DEFAULT_LAB, type LabManifest } from "../grader/manifest.ts";
import { importCheck } from "../grader/grade.ts";
import { fillTemplate } from "../grader/message-template.ts";
import { writeTypecheckConfig } from "../grader/preflight.ts";
import { canWatch, watchLoop, watchWords } from "./lab-watch.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Default wall-clock limit of one run, in seconds. */
export const DEFAULT_LIMIT_S = 90;

const MESSAGES = {
  zh: {
    usage: "用法：npm run lab:starter -- [--lab 33|13] [--lang zh|en] [--watch] [--limit-s 秒数] [测试名过滤]",
    noLab: "找不到实验 {lab}（labs/ 下没有这个目录）",
    noEntry: "{dir} 里没有 {entry}",
    typecheck: "① 类型检查 {entry} …",
    typeFailed: "类型检查没有通过：先修好上面的编译错误（文件:行:列），再运行测试。",
    typeOk: "   通过",
    outside: "这个目录在练习册（{root}）之外，那里的 .ts 文件不会被当作 ES 模块：请把你的副本放在练习册里面（例如 scratch/ 下）再运行。",
    importing: "② 导入检查 …",
    importFailed: "导入检查没有通过：{message}",
    importOk: "   通过（{exports}）",
    running: "③ 运行证据测试（时限 {limit} 秒）…",
    watchHint: "（想在保存后自动重跑：npm run {script} --watch）",
    runningFiles: "③ 运行 LAB_TEST_FILES 指定的测试：{files}（时限 {limit} 秒）…",
    stopped: "运行超过 {limit} 秒被终止（同步死循环？永不返回的 close()？）。",
    stillRunning: "当时仍未结束的测试：{tests}",
    filesRunning: "当时仍未结束的测试文件（卡在其中某个测试里，来不及报告是哪一个）：{files}",
    noneRunning: "（没有正在运行的测试：卡在测试文件加载阶段，检查模块顶层代码）",
    badLang: "--lang 只能是 zh 或 en",
    badLimit: "--limit-s 需要一个正整数",
  },
  en: {
    usage: "usage: npm run lab:starter -- [--lab 33|13] [--lang zh|en] [--watch] [--limit-s SECONDS] [test name filter]",
    noLab: "no lab {lab} (no such folder under labs/)",
    noEntry: "{dir} has no {entry}",
    typecheck: "1. type check of {entry} …",
    typeFailed: "The type check failed: fix the compiler errors above (file:line:column) before running the tests.",
    typeOk: "   ok",
    outside: "This folder is outside the workbook ({root}), where .ts files are not ES modules: put your copy inside the workbook (under scratch/, say) and run again.",
    importing: "2. import check …",
    importFailed: "The import check failed: {message}",
    importOk: "   ok ({exports})",
    running: "3. evidence tests (limit {limit} s) …",
    watchHint: "(to rerun on every save: npm run {script} --watch)",
    runningFiles: "3. the tests LAB_TEST_FILES names: {files} (limit {limit} s) …",
    stopped: "The run was stopped after {limit} s (an endless synchronous loop? a close() that never resolves?).",
    stillRunning: "Tests still running then: {tests}",
    filesRunning: "Test files still running then (stuck inside one of their tests, too busy to say which): {files}",
    noneRunning: "(no test was running: it was stuck loading a test file; check your module's top-level code)",
    badLang: "--lang must be zh or en",
    badLimit: "--limit-s needs a positive integer",
  },
};

type Lang = "zh" | "en";
type MessageKey = keyof (typeof MESSAGES)["zh"];

function say(lang: Lang, key: MessageKey, params: Record<string, unknown> = {}): string {
  return fillTemplate(MESSAGES[lang][key], params);
}

// Splits our own flags from the ones that go to vitest.
export interface LabTestOptions {
  target: string;
  lab: string;
  lang: Lang;
  watch: boolean;
  limitS: number;
  typecheck: boolean;
  rest: string[];
  error: MessageKey | undefined;
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): LabTestOptions {
  const options: LabTestOptions = { target: "solution", lab: DEFAULT_LAB, lang: env.LAB_LANG === "en" ? "en" : "zh", watch: false, limitS: DEFAULT_LIMIT_S, typecheck: true, rest: [], error: undefined };
  const args = [...argv];
  let targetSet = false;
  while (args.length > 0) {
    const arg = args.shift()!;
    const value = (name: string) => (arg.includes("=") ? arg.slice(name.length + 1) : args.shift());
    if (arg === "--lang" || arg.startsWith("--lang=")) {
      const lang = value("--lang");
      if (lang !== "zh" && lang !== "en") options.error = "badLang";
      else options.lang = lang;
    } else if (arg === "--lab" || arg.startsWith("--lab=")) options.lab = value("--lab") ?? "";
    else if (arg === "--watch" || arg === "-w") options.watch = true;
    else if (arg === "--no-typecheck") options.typecheck = false;
    else if (arg === "--limit-s" || arg.startsWith("--limit-s=")) {
      const n = Number(value("--limit-s"));
      if (!Number.isInteger(n) || n <= 0) options.error = "badLimit";
      else options.limitS = n;
    } else if (!targetSet && !arg.startsWith("-")) {
      options.target = arg;
      targetSet = true;
    } else options.rest.push(arg);
  }
  return options;
}

// labs/<id> for a full id or a lesson number ("13" → "13-process-boundary").
function findLab(lab: string): string | undefined {
  const names = readdirSync(join(root, "labs"));
  return names.find((name) => name === lab) ?? names.find((name) => name.startsWith(`${lab}-`));
}

// Runs a child in its own process group; resolves with its exit status. At `limitMs` the
// whole group is killed and `timedOut` is set.
interface RunOptions {
  env?: NodeJS.ProcessEnv;
  limitMs?: number;
  stdio?: StdioOptions;
}

function run(cmd: string, args: string[], { env = process.env, limitMs, stdio = "inherit" }: RunOptions = {}): Promise<{ code: number | null; timedOut: boolean }> {
  return new Promise((done) => {
    const detached = process.platform !== "win32";
    const child = spawn(cmd, args, { cwd: root, env, stdio, detached });
    let timedOut = false;
    const killGroup = () => {
      try {
        if (!detached) throw new Error("no group of its own");
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = limitMs ? setTimeout(() => ((timedOut = true), killGroup()), limitMs) : undefined;
    // Ctrl-C in the terminal reaches our group too; make sure the child's group goes with us.
    const onSignal = () => killGroup();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    child.once("close", (code) => {
      clearTimeout(timer);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      // Whatever the tests left in the group (a server a broken close() never stopped) goes too.
      if (detached) killGroup();
      done({ code, timedOut });
    });
  });
}

// What never finished, from the progress reporter's lines: the tests that started and never
// ended, else the test files that were queued and never ended.
function stillRunning(progressFile: string): { tests: string[]; files: string[] } {
  const tests = new Map<string, string>();
  const files = new Map<string, string>();
  if (!existsSync(progressFile)) return { tests: [], files: [] };
  for (const line of readFileSync(progressFile, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let p: { event: string; file: string; ancestors?: string[]; title?: string };
    try {
      p = JSON.parse(line);
    } catch {
      continue;
    }
    const name = [...(p.ancestors ?? []), p.title ?? ""].join(" > ");
    const key = `${p.file}\0${name}`;
    if (p.event === "start") tests.set(key, `${name} (${relative(root, p.file)})`);
    else if (p.event === "end") tests.delete(key);
    else if (p.event === "file-start") files.set(p.file, relative(root, p.file));
    else if (p.event === "file-end") files.delete(p.file);
  }
  return { tests: [...tests.values()], files: [...files.values()] };
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const options = parseArgs(argv);
  const { lang } = options;
  if (options.error) {
    console.error(say(lang, options.error));
    console.error(say(lang, "usage"));
    return 2;
  }
  const target = await findTarget(options);
  if (typeof target === "number") return target;
  if (options.watch && canWatch()) return watchLoop(relative(root, target.dir) || target.dir, lang, () => oneRun(target, options));
  if (options.watch) console.log(watchWords(lang, "noTty"));
  const code = await oneRun(target, options);
  // The way into watch mode, said once a run has failed (a learner at work), never inside it.
  // (The same command with --watch: the lab and the language it was run with.)
  const script = options.target === "starter" || options.target === "solution" ? `lab:${options.target}` : undefined;
  const flags = [...(options.lab === DEFAULT_LAB ? [] : ["--lab", options.lab]), ...(lang === "en" ? ["--lang", "en"] : [])].join(" ");
  if (code !== 0 && !options.watch && script) console.log(say(lang, "watchHint", { script: flags ? `${script} -- ${flags}` : `${script} --` }));
  return code;
}

// One safe run: the type check, the import check, then the evidence tests; its exit status.
async function oneRun(target: Target, options: LabTestOptions): Promise<number> {
  const { lang } = options;
  const temp = mkdtempSync(join(tmpdir(), "lab-test-"));
  try {
    if (options.typecheck && !(await typecheckStep(target, temp, lang))) return 2;
    console.log(say(lang, "importing"));
    const verdict = await importCheck(target.dir, target.manifest, lang);
    if (!verdict.ok) {
      console.error(say(lang, "importFailed", { message: verdict.message }));
      return 2;
    }
    console.log(say(lang, "importOk", { exports: target.manifest.requiredExports.join(", ") }));
    return await testStep(target, options, temp);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** The lab and the folder under test. */
interface Target {
  manifest: LabManifest;
  labDir: string;
  dir: string;
}

// The lab's manifest and the folder to test, or the exit status when there is none.
async function findTarget(options: LabTestOptions): Promise<Target | number> {
  const labId = findLab(options.lab);
  if (!labId) {
    console.error(say(options.lang, "noLab", { lab: options.lab }));
    return 2;
  }
  const labDir = join(root, "labs", labId);
  const mod = await import(pathToFileURL(join(labDir, "lab.ts")).href);
  const manifest = (mod.lab ?? mod.default) as LabManifest;
  const target = options.target;
  const dir = target === "starter" || target === "solution" ? join(labDir, manifest[target]) : resolve(target);
  if (!existsSync(join(dir, manifest.entry))) {
    console.error(say(options.lang, "noEntry", { dir, entry: manifest.entry }));
    return 2;
  }
  return { manifest, labDir, dir };
}

// ① The type check; false when it failed (its errors are printed as the compiler prints them).
async function typecheckStep({ manifest, dir }: Target, temp: string, lang: Lang): Promise<boolean> {
  console.log(say(lang, "typecheck", { entry: relative(root, join(dir, manifest.entry)) }));
  const tsconfig = writeTypecheckConfig(join(temp, "tsconfig.json"), root, join(dir, manifest.entry));
  const tsc = await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", tsconfig, "--pretty", String(process.stdout.isTTY === true)], { limitMs: 120_000 });
  if (tsc.code !== 0) {
    console.error(say(lang, "typeFailed"));
    // Outside the workbook no package.json says "type": "module", so the compiler reads the
    // files as CommonJS and rejects every import: say so instead of leaving 100 errors.
    if (relative(root, dir).startsWith("..")) console.error(say(lang, "outside", { root }));
    return false;
  }
  console.log(say(lang, "typeOk"));
  return true;
}

// ③ The evidence tests in vitest, one run under the wall-clock limit.
// `temp` is the run's own folder (oneRun removes it): the progress file, and the temp dir of
// vitest and the tests, so the fixture workspaces go with it too, even from a run stopped at the
// limit, whose workers are killed before they can remove them.
async function testStep({ manifest, labDir, dir }: Target, options: LabTestOptions, temp: string): Promise<number> {
  const { lang } = options;
  const progressFile = join(temp, "progress.jsonl");
  const scratch = join(temp, "tmp");
  mkdirSync(scratch);
  const reporters = options.rest.some((a) => a.startsWith("--reporter")) ? [] : ["--reporter=default"];
  const env = {
    LAB_TEST_FILES: manifest.evidenceFiles.join(","),
    ...process.env,
    LAB_SUBMISSION: dir,
    LAB_LANG: lang,
    LAB_PROGRESS_FILE: progressFile,
    // (os.tmpdir() reads TMPDIR, and TEMP or TMP on Windows.)
    TMPDIR: scratch,
    TEMP: scratch,
    TMP: scratch,
  };
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  const config = join(labDir, manifest.vitestConfig);
  // LAB_TEST_FILES chooses other tests (the homework, say): the heading names them.
  const files = env.LAB_TEST_FILES === manifest.evidenceFiles.join(",") ? undefined : env.LAB_TEST_FILES;
  console.log(files ? say(lang, "runningFiles", { files, limit: options.limitS }) : say(lang, "running", { limit: options.limitS }));
  const progress = join(root, "scripts", "lab-progress-reporter.ts");
  const outcome = await run(process.execPath, [vitest, "run", "--config", config, ...reporters, `--reporter=${progress}`, ...options.rest], {
    env,
    limitMs: options.limitS * 1000,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (!outcome.timedOut) return outcome.code ?? 1;
  console.error(`\n${say(lang, "stopped", { limit: options.limitS })}`);
  const open = stillRunning(progressFile);
  if (open.tests.length > 0) console.error(say(lang, "stillRunning", { tests: open.tests.join("; ") }));
  else if (open.files.length > 0) console.error(say(lang, "filesRunning", { files: open.files.join("; ") }));
  else console.error(say(lang, "noneRunning"));
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
