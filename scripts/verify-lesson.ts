// Two checks of one lesson.
//
// `npm run verify:lesson -- 33 [--lang zh|en] [--submission DIR] [--json FILE]` is the
// learner's self-check, right at every stage of the lab: the environment (Node, the installed
// dependencies), the lesson and its manifest, and the learner's copy (default: the starter),
// which must type-check, import and be gradable; it is graded and its progress by TODO shown,
// but a copy that does not pass yet is not a failure of the self-check. Exit 0 when the
// environment, the lesson and the copy are all usable; 1 otherwise.
//
// `npm run verify:maintainer -- 33 [--lang zh|en] [--json FILE]` is the maintainers' check
// of the lesson as a whole (run by `npm test` through tests/lesson/verify.test.ts):
//   1. the lesson file is there, with every section the course requires and every anchor
//      the lab manifest's hints point to;
//   2. its code excerpts match the regions of the real files they quote;
//   3. the lab manifest (labs/<lab>/lab.ts) is valid;
//   4. the starter still carries its TODO(...) markers;
//   5. the grader passes the reference solution on every evidence, rubric and orphan check;
//   6. the grader fails the starter on exactly the checks the manifest pins;
//   7. every shell command in the lesson runs as the lesson says.
// A step that cannot run (no grader yet, for instance) is a failure, never a silent pass.
// Exit status: 0 when every step passed, 1 otherwise, 2 on bad usage.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { extractCommands, LESSON_RUN_ENV, runCommand } from "../lessons/tools/commands.ts";
import { anchorsOf, requirementsFor } from "../lessons/tools/requirements.ts";
import { checkSnippets, ROOT } from "../lessons/tools/snippets.ts";
import { renderProgress } from "../grader/report/progress.ts";

type Lang = "zh" | "en";
type Status = "pass" | "fail" | "skip";

interface Step {
  id: string;
  title: string;
  status: Status;
  details: string[];
  elapsedMs: number;
}

/** Deadline for one grader run, in ms. */
const GRADE_TIMEOUT_MS = 300_000;

const TITLES: Record<string, { zh: string; en: string }> = {
  lesson: { zh: "课程文件与章节", en: "lesson file and sections" },
  snippets: { zh: "代码摘录与源码一致", en: "code excerpts match their sources" },
  manifest: { zh: "实验清单 lab.ts 有效", en: "lab manifest lab.ts is valid" },
  todos: { zh: "starter 的 TODO 标记", en: "starter TODO markers" },
  solution: { zh: "参考实现通过全部证据、rubric 与孤儿检查", en: "the solution passes every evidence, rubric and orphan check" },
  starter: { zh: "starter 恰好失败预期的检查", en: "the starter fails exactly the pinned checks" },
  commands: { zh: "课程中的命令都能运行", en: "the lesson's commands run" },
  environment: { zh: "运行环境（Node 与已安装的依赖）", en: "environment (Node and the installed dependencies)" },
  copy: { zh: "你的工作副本可以评分", en: "your working copy can be graded" },
};

/** Oldest Node major version the workbook supports. */
const MIN_NODE_MAJOR = 20;


// Finds lessons/<N>-*/ and labs/<N>-*/ for a lesson number or a full lab id.
function locate(arg: string): { lessonDir: string; labDir: string; labId: string } | string {
  const pick = (parent: string) =>
    readdirSync(join(ROOT, parent)).find((name) => name === arg || name.startsWith(`${arg}-`));
  const lesson = pick("lessons");
  const lab = pick("labs");
  if (!lesson) return `no lessons/${arg}-* folder`;
  if (!lab) return `no labs/${arg}-* folder`;
  return { lessonDir: join(ROOT, "lessons", lesson), labDir: join(ROOT, "labs", lab), labId: lab };
}

async function timed(id: string, lang: Lang, run: () => Promise<{ status: Status; details: string[] }>): Promise<Step> {
  const started = Date.now();
  let outcome: { status: Status; details: string[] };
  try {
    outcome = await run();
  } catch (error) {
    outcome = { status: "fail", details: [String((error as Error)?.stack ?? error)] };
  }
  return { id, title: TITLES[id]![lang], ...outcome, elapsedMs: Date.now() - started };
}

function checkLesson(lessonDir: string, labId: string, manifest: any): { status: Status; details: string[] } {
  const file = join(lessonDir, "README.md");
  if (!existsSync(file)) return { status: "fail", details: [`missing ${file}`] };
  const text = readFileSync(file, "utf8");
  const anchors = anchorsOf(text);
  const details: string[] = [];
  for (const anchor of requirementsFor(labId).anchors) if (!anchors.has(anchor)) details.push(`missing section anchor #${anchor}`);
  if (!text.includes("```mermaid") || !text.includes("sequenceDiagram")) details.push("missing the sequence diagram");
  const english = join(lessonDir, "README.en.md");
  if (!existsSync(english)) details.push(`missing the English companion ${english}`);
  else {
    const en = anchorsOf(readFileSync(english, "utf8"));
    for (const anchor of anchors) if (!en.has(anchor)) details.push(`README.en.md lacks the anchor #${anchor}`);
  }
  for (const check of manifest?.checks ?? []) {
    const [path, anchor] = String(check.lesson ?? "").split("#");
    if (!path || !anchor) continue;
    if (resolve(ROOT, path) !== file) continue;
    if (!anchors.has(anchor)) details.push(`${check.id}: hint points to #${anchor}, which the lesson does not have`);
  }
  return { status: details.length === 0 ? "pass" : "fail", details };
}

// The manifest's fields and files. The learner's self-check runs where the reference solution
// is not shipped (the student edition), so only the maintainers' check requires it.
function checkManifest(labDir: string, labId: string, manifest: any, sides: string[] = ["starter", "solution"]): { status: Status; details: string[] } {
  const details: string[] = [];
  if (!manifest) return { status: "fail", details: ["labs/<lab>/lab.ts did not load (see above)"] };
  if (manifest.id !== labId) details.push(`id is ${JSON.stringify(manifest.id)}, expected ${labId}`);
  for (const key of sides) {
    const dir = join(labDir, String(manifest[key]));
    if (!existsSync(join(dir, String(manifest.entry)))) details.push(`${key}: no ${manifest.entry} in ${dir}`);
  }
  for (const f of [...(manifest.evidenceFiles ?? []), ...(manifest.probeFiles ?? [])]) {
    if (!existsSync(join(labDir, f))) details.push(`test file ${f} does not exist`);
  }
  if (!existsSync(join(labDir, String(manifest.vitestConfig)))) details.push(`vitestConfig ${manifest.vitestConfig} does not exist`);
  const checks: any[] = Array.isArray(manifest.checks) ? manifest.checks : [];
  const ids = new Set(checks.map((c) => c.id));
  if (ids.size !== checks.length) details.push("check ids are not unique");
  for (const id of requirementsFor(labId).checks) if (!ids.has(id)) details.push(`missing check ${id}`);
  for (const check of checks) {
    if (!(typeof check.weight === "number" && check.weight >= 0)) details.push(`${check.id}: weight must be a number >= 0`);
    for (const field of ["title", "hint"]) {
      if (!check[field]?.zh || !check[field]?.en) details.push(`${check.id}: ${field} needs zh and en`);
    }
  }
  for (const side of ["solution", "starter"]) {
    const pinned = manifest.expected?.[side];
    if (!pinned) {
      details.push(`expected.${side} is missing`);
      continue;
    }
    for (const check of checks) {
      if (check.kind === "homework") continue;
      if (!(check.id in pinned)) details.push(`expected.${side} does not pin ${check.id}`);
    }
  }
  return { status: details.length === 0 ? "pass" : "fail", details };
}

function checkTodos(labDir: string, manifest: any): { status: Status; details: string[] } {
  const dir = join(labDir, String(manifest?.starter ?? "starter"), "src");
  if (!existsSync(dir)) return { status: "fail", details: [`missing ${dir}`] };
  const markers: string[] = [];
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), "utf8");
    for (const m of text.matchAll(/TODO\(([^)]+)\)/g)) markers.push(m[1]!);
  }
  const details = [`${markers.length} TODO(...) markers, ${new Set(markers).size} distinct`];
  // Every TODO the manifest lists is marked in the starter (the first is the seed's task).
  const required: string[] = Array.isArray(manifest?.todos) ? manifest.todos.map((t: any) => String(t.tag)) : [];
  const missing = required.filter((tag) => !markers.includes(tag));
  if (markers.length === 0) return { status: "fail", details: [...details, "the starter has no TODO(...) marker"] };
  if (missing.length > 0) return { status: "fail", details: [...details, ...missing.map((tag) => `missing TODO(${tag})`)] };
  return { status: "pass", details };
}

// LAB_HANG_MS, when set, becomes the grader's --hang-ms: a loaded CI machine can give a
// correct client more time than the 2 s a learner's grade uses.
function hangArgs(): string[] {
  const ms = process.env.LAB_HANG_MS;
  return ms && /^[1-9]\d*$/.test(ms) ? ["--hang-ms", ms] : [];
}

// Runs the grader in a child and reads its --json result.
function grade(args: string[], lang: Lang, labId: string): Promise<{ exitCode: number | null; result: any; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "lab33-verify-"));
  const json = join(dir, "result.json");
  const tsx = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
  return new Promise((done) => {
    const child = spawn(process.execPath, [tsx, join(ROOT, "grader", "cli.ts"), "--lab", labId, ...args, ...hangArgs(), "--json", json, "--lang", lang], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, GRADE_TIMEOUT_MS);
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      let result: any;
      try {
        result = JSON.parse(readFileSync(json, "utf8"));
      } catch {
        result = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      done({ exitCode, result, output });
    });
  });
}

function graderMissing(): { status: Status; details: string[] } | undefined {
  if (existsSync(join(ROOT, "grader", "cli.ts"))) return undefined;
  return { status: "fail", details: ["NOT RUN: grader/cli.ts does not exist yet, so this step could not be checked"] };
}

async function checkSolution(lang: Lang, labId: string, manifest: any): Promise<{ status: Status; details: string[] }> {
  const missing = graderMissing();
  if (missing) return missing;
  const { exitCode, result, output } = await grade(["--solution"], lang, labId);
  if (!result) return { status: "fail", details: [`the grader wrote no result (exit ${exitCode})`, tail(output)] };
  const details: string[] = [`status ${result.status}, score ${result.score}/${result.maxScore}, exit ${exitCode}`];
  const checks: any[] = result.checks ?? [];
  const byId = new Map(checks.map((c) => [c.id, c]));
  const graded = (manifest?.checks ?? []).filter((c: any) => c.kind !== "homework").map((c: any) => c.id);
  for (const id of new Set([...requirementsFor(labId).checks, ...graded])) {
    const check = byId.get(id);
    if (!check) details.push(`${id}: missing from the result`);
    else if (check.status !== "pass") details.push(`${id}: ${check.status}: ${check.message ?? ""}`);
  }
  const ok = exitCode === 0 && result.status === "pass" && details.length === 1;
  return { status: ok ? "pass" : "fail", details };
}

async function checkStarter(lang: Lang, labId: string, manifest: any): Promise<{ status: Status; details: string[] }> {
  const missing = graderMissing();
  if (missing) return missing;
  const pinned: Record<string, string> | undefined = manifest?.expected?.starter;
  if (!pinned) return { status: "fail", details: ["the manifest pins no expected.starter statuses"] };
  const { exitCode, result, output } = await grade([], lang, labId);
  if (!result) return { status: "fail", details: [`the grader wrote no result (exit ${exitCode})`, tail(output)] };
  const byId = new Map((result.checks ?? []).map((c: any) => [c.id, c.status]));
  // Homework checks are bonus and never pinned; list only the graded ones.
  const failing = [...byId].filter(([id, s]) => s !== "pass" && !String(id).startsWith("homework/")).map(([id]) => id);
  const details: string[] = [`status ${result.status}, exit ${exitCode}; failing: ${failing.join(", ") || "none"}`];
  for (const [id, want] of Object.entries(pinned)) {
    const got = byId.get(id);
    if (got !== want) details.push(`${id}: pinned ${want}, got ${got ?? "missing"}`);
  }
  const ok = exitCode === 1 && result.status === "fail" && details.length === 1;
  return { status: ok ? "pass" : "fail", details };
}

async function checkCommands(lessonDir: string, lesson: string, labId: string): Promise<{ status: Status; details: string[] }> {
  if (process.env[LESSON_RUN_ENV] === "1") {
    return { status: "skip", details: ["not re-run: this verify:lesson was itself started by a lesson-command run, which runs them"] };
  }
  const commands = extractCommands(readFileSync(join(lessonDir, "README.md"), "utf8"));
  const details: string[] = [];
  let failed = false;
  for (const command of commands) {
    // This very check is not re-run; a self-check of another lesson (the prerequisite) is.
    const verify = /npm run verify:(?:lesson|maintainer) -- (\S+)/.exec(command.command);
    if (verify && (verify[1] === lesson || labId === verify[1] || labId.startsWith(`${verify[1]}-`))) {
      details.push(`line ${command.line}: ${command.command}: not re-run (it is the command running now)`);
      continue;
    }
    const outcome = await runCommand(command, ROOT);
    details.push(`line ${command.line}: ${command.command}: ${outcome.ok ? "ok" : `FAILED (${outcome.problem})`} in ${outcome.elapsedMs} ms`);
    if (!outcome.ok) {
      failed = true;
      details.push(tail(outcome.output));
    }
  }
  if (commands.length === 0) return { status: "fail", details: ["the lesson has no ```bash commands"] };
  return { status: failed ? "fail" : "pass", details };
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split("\n").slice(-lines).map((l) => `      | ${l}`).join("\n");
}

async function loadManifest(labDir: string): Promise<{ manifest: any; error?: string }> {
  const file = join(labDir, "lab.ts");
  if (!existsSync(file)) return { manifest: undefined, error: `missing ${file}` };
  try {
    const mod = await import(pathToFileURL(file).href);
    return { manifest: mod.default ?? mod.lab };
  } catch (error) {
    return { manifest: undefined, error: String((error as Error)?.message ?? error) };
  }
}

// The environment a learner needs: a supported Node and the installed dependencies.
function checkEnvironment(): { status: Status; details: string[] } {
  const details = [`Node ${process.version}`];
  const major = Number(process.versions.node.split(".")[0]);
  if (major < MIN_NODE_MAJOR) details.push(`Node ${MIN_NODE_MAJOR} or later is required`);
  for (const pkg of ["vitest", "tsx", "typescript"]) {
    if (!existsSync(join(ROOT, "node_modules", pkg, "package.json"))) details.push(`node_modules/${pkg} is missing: run npm ci`);
  }
  return { status: details.length === 1 ? "pass" : "fail", details };
}

// Grades the learner's copy: usable when it can be graded at all (pass or fail); a copy that
// does not compile, does not import or hangs at import is reported with its file and line.
async function checkCopy(lang: Lang, labId: string, submission: string | undefined): Promise<{ status: Status; details: string[] }> {
  const missing = graderMissing();
  if (missing) return missing;
  const { exitCode, result, output } = await grade(submission ? ["--submission", submission] : [], lang, labId);
  if (!result) return { status: "fail", details: [`the grader wrote no result (exit ${exitCode})`, tail(output)] };
  const word = { pass: lang === "zh" ? "通过" : "pass", fail: lang === "zh" ? "未通过" : "fail", error: lang === "zh" ? "无法评分" : "could not grade" }[result.status as "pass" | "fail" | "error"];
  const details = [`${relativeToRoot(String(result.submission))}: ${word} ${result.score}/${result.maxScore}`];
  if (result.status === "error") {
    details.push(String(result.message ?? ""));
    return { status: "fail", details };
  }
  if (result.status === "fail") {
    details.push(lang === "zh" ? "还没通过是正常的：按 TODO 顺序做，做完全部才会通过。" : "Not passing yet is expected until every TODO is done.");
  }
  if (Array.isArray(result.todos) && result.todos.length > 0) details.push(...renderProgress(result.todos, lang));
  return { status: "pass", details };
}

function relativeToRoot(path: string): string {
  return path.startsWith(`${ROOT}/`) ? path.slice(ROOT.length + 1) : path;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let lang: Lang = process.env.LAB_LANG === "en" ? "en" : "zh";
  let json: string | undefined;
  let submission: string | undefined;
  let maintainer = false;
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--lang") lang = argv[++i] === "en" ? "en" : "zh";
    else if (argv[i] === "--json") json = argv[++i];
    else if (argv[i] === "--submission") submission = argv[++i];
    else if (argv[i] === "--maintainer") maintainer = true;
    else positional.push(argv[i]!);
  }
  if (positional.length !== 1 || (maintainer && submission)) {
    console.error("usage: npm run verify:lesson -- <lesson number, e.g. 33> [--lang zh|en] [--submission DIR] [--json FILE]");
    // (The learner's edition has no maintainers' check: its usage names only what it has.)
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
    if ("verify:maintainer" in scripts) console.error("       npm run verify:maintainer -- <lesson number> [--lang zh|en] [--json FILE]");
    return 2;
  }
  const where = locate(positional[0]!);
  if (typeof where === "string") {
    console.error(where);
    return 2;
  }
  const { lessonDir, labDir, labId } = where;
  const { manifest, error } = await loadManifest(labDir);

  const steps: Step[] = [];
  const report = (step: Step) => {
    steps.push(step);
    const mark = step.status === "pass" ? "✔" : step.status === "skip" ? "–" : "✘";
    const word = { pass: lang === "zh" ? "通过" : "pass", fail: lang === "zh" ? "失败" : "FAIL", skip: lang === "zh" ? "跳过" : "skipped" }[step.status];
    console.log(`${mark} [${word}] ${step.title} (${step.elapsedMs} ms)`);
    for (const line of step.details) console.log(line.startsWith("      |") ? line : `    ${line}`);
  };
  const sides = maintainer ? ["starter", "solution"] : ["starter"];
  const manifestStep = () => timed("manifest", lang, async () => (error ? { status: "fail", details: [error] } : checkManifest(labDir, labId, manifest, sides)));
  if (maintainer) {
    console.log(lang === "zh" ? `维护者检查第 ${positional[0]} 课：${labId}` : `Maintainer check of lesson ${positional[0]}: ${labId}`);
    report(await timed("lesson", lang, async () => checkLesson(lessonDir, labId, manifest)));
    report(
      await timed("snippets", lang, async () => {
        const { count, problems } = checkSnippets(join(lessonDir, "README.md"));
        const details = [`${count} excerpt(s)`, ...problems.map((p) => p.message)];
        if (problems.length > 0) details.push("fix: npx tsx lessons/tools/snippets.ts --write");
        // A lesson without excerpts is fine; one whose excerpts drifted is not.
        return { status: problems.length === 0 ? "pass" : "fail", details };
      }),
    );
    report(await manifestStep());
    report(await timed("todos", lang, async () => checkTodos(labDir, manifest)));
    report(await timed("solution", lang, () => checkSolution(lang, labId, manifest)));
    report(await timed("starter", lang, () => checkStarter(lang, labId, manifest)));
    report(await timed("commands", lang, () => checkCommands(lessonDir, positional[0]!, labId)));
  } else {
    console.log(lang === "zh" ? `学员自检第 ${positional[0]} 课：${labId}` : `Learner self-check of lesson ${positional[0]}: ${labId}`);
    report(await timed("environment", lang, async () => checkEnvironment()));
    report(await timed("lesson", lang, async () => checkLesson(lessonDir, labId, manifest)));
    report(await manifestStep());
    report(await timed("copy", lang, () => checkCopy(lang, labId, submission ? resolve(submission) : undefined)));
  }

  const failed = steps.filter((s) => s.status === "fail");
  console.log(
    failed.length === 0
      ? lang === "zh" ? (maintainer ? "结论：本课自检通过。" : "结论：环境、课程与你的工作副本都可用；进度见上。") : maintainer ? "Verdict: the lesson verifies." : "Verdict: the environment, the lesson and your copy are usable; your progress is above."
      : lang === "zh" ? `结论：${failed.length} 项失败：${failed.map((s) => s.id).join(", ")}` : `Verdict: ${failed.length} step(s) failed: ${failed.map((s) => s.id).join(", ")}`,
  );
  if (json) writeFileSync(json, `${JSON.stringify({ lesson: labId, mode: maintainer ? "maintainer" : "learner", ok: failed.length === 0, steps }, null, 2)}\n`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = await main();
