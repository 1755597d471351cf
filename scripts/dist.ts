// npm run dist -- student OUT_DIR     the learner repository (Classroom template / hand-out)
// npm run dist -- gradescope OUT_ZIP  the Gradescope autograder zip
//
// Both are built from this workbook by copying files, never by forking them: the grader, the
// evidence tests, the probes, the fixtures and the homework are the same files. What a
// learner must not get is left out (the reference solution, the corpus of its mutations, the
// project's own tests, the demos that drive the solution), and the Markdown is filtered so
// that no lesson excerpt of the solution and no command that needs it remains.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeZip } from "./zip.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LAB = "labs/33-mcp-lite";

/** Folders copied whole into the learner repository. */
const STUDENT_DIRS = [`${LAB}/starter`, `${LAB}/tests`, `${LAB}/probes`, `${LAB}/homework`, "grader/child", "grader/report", "grader/platforms", "grader/sandbox"];
/** Single files copied into the learner repository. */
const STUDENT_FILES = [
  `${LAB}/lab.ts`,
  `${LAB}/vitest.config.ts`,
  `${LAB}/README.md`,
  "fixtures/index.ts",
  "fixtures/mcp-server.mjs",
  "fixtures/README.md",
  "scripts/lab-test.mjs",
  "scripts/lab-test.ts",
  "scripts/lab-progress-reporter.ts",
  "lessons/33-mcp-lite/README.md",
  "lessons/33-mcp-lite/README.en.md",
  "docs/quick-start.md",
  "docs/client-contract.md",
  "tsconfig.json",
];
/** grader/*.ts that only the workbook needs (the corpus runner, the benchmark). */
const GRADER_ONLY_WORKBOOK = new Set(["bench.ts", "corpus.ts", "README.md"]);
/** Dev dependencies only the workbook uses (its own tests, coverage, the MCP SDK comparison,
 *  the real MCP servers the extensions package is tested against). */
const WORKBOOK_ONLY_PACKAGES = new Set([
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/server-everything",
  "@modelcontextprotocol/server-memory",
  "@vitest/coverage-v8",
  "saxes",
]);
/** The learner repository's scripts: the two commands of its README, and their parts. */
export const STUDENT_SCRIPTS: Record<string, string> = {
  test: "npm run typecheck && node scripts/lab-test.mjs starter",
  typecheck: "tsc --noEmit -p .",
  grade: "tsx grader/cli.ts",
  "lab:starter": "node scripts/lab-test.mjs starter",
};

// Builds the learner repository in `out` (which must not exist or be empty).
export function buildStudent(out: string): void {
  if (existsSync(out) && readdirSync(out).length > 0) throw new Error(`${out} is not empty`);
  mkdirSync(out, { recursive: true });
  for (const dir of STUDENT_DIRS) cpSync(join(ROOT, dir), join(out, dir), { recursive: true, filter: (src) => !src.includes("node_modules") });
  for (const name of readdirSync(join(ROOT, "grader"))) {
    const src = join(ROOT, "grader", name);
    if (statSync(src).isFile() && !GRADER_ONLY_WORKBOOK.has(name)) cpSync(src, join(out, "grader", name));
  }
  for (const file of STUDENT_FILES) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    const text = readFileSync(join(ROOT, file));
    writeFileSync(join(out, file), file.endsWith(".md") ? filterMarkdown(text.toString("utf8"), file.endsWith(".en.md") ? "en" : "zh") : text);
  }
  const pkg = studentPackage(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")));
  writeFileSync(join(out, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(out, "package-lock.json"), `${JSON.stringify(studentLock(JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")), pkg), null, 2)}\n`);
  mkdirSync(join(out, ".github", "workflows"), { recursive: true });
  cpSync(join(ROOT, "grader/platforms/github-classroom/classroom.yml"), join(out, ".github/workflows/classroom.yml"));
  writeFileSync(join(out, ".gitignore"), "node_modules/\n.grade/\ncoverage/\ngrade.json\ngrade.md\n");
  writeFileSync(join(out, "README.md"), studentReadme());
  for (const file of listFiles(out).filter((f) => f.endsWith(".md"))) writeFileSync(file, unlinkMissing(readFileSync(file, "utf8"), dirname(file)));
}

// Keeps the text of every relative Markdown link whose target the learner repository does
// not contain (the architecture notes, another lesson's solution, …) and drops the link.
export function unlinkMissing(markdown: string, dir: string): string {
  return markdown.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, text: string, target: string) => {
    if (/^(https?:|mailto:|#)/.test(target)) return whole;
    return existsSync(resolve(dir, target.split("#")[0]!)) ? whole : text;
  });
}

// Builds the Gradescope autograder zip: setup.sh and run_autograder at its root, next to
// the learner repository's files (Gradescope unpacks the zip to /autograder/source).
export function buildGradescope(outZip: string): void {
  const work = mkdtempSync(join(tmpdir(), "lab33-dist-"));
  try {
    const tree = join(work, "source");
    buildStudent(tree);
    cpSync(join(ROOT, "grader/platforms/gradescope/setup.sh"), join(tree, "setup.sh"));
    cpSync(join(ROOT, "grader/platforms/gradescope/run_autograder"), join(tree, "run_autograder"));
    mkdirSync(dirname(resolve(outZip)), { recursive: true });
    rmSync(outZip, { force: true });
    writeZip(resolve(outZip), listFiles(tree).map((file) => ({ name: relative(tree, file).split("\\").join("/"), file })));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

interface PackageJson {
  name: string;
  version: string;
  engines?: Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

// The learner repository's package.json: the workbook's dependencies (the grader and the
// tests need the same ones), its own scripts, and "#submission" pointing at the starter.
export function studentPackage(root: PackageJson): PackageJson {
  return {
    name: "lab33-mcp-lite-student",
    version: root.version,
    private: true,
    type: "module",
    engines: root.engines ?? { node: ">=20" },
    scripts: STUDENT_SCRIPTS,
    ...(root.dependencies ? { dependencies: root.dependencies } : {}),
    ...(root.devDependencies ? { devDependencies: Object.fromEntries(Object.entries(root.devDependencies).filter(([name]) => !WORKBOOK_ONLY_PACKAGES.has(name))) } : {}),
    imports: { "#submission/*": `./${LAB}/starter/*` },
  };
}

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  link?: boolean;
  [key: string]: unknown;
}

// The workbook's lock file cut down to the packages the learner repository's package.json
// reaches (workspace packages and what only they need are dropped), so `npm ci` installs
// exactly the versions the workbook was tested with.
export function studentLock(lock: { packages: Record<string, LockEntry>; [key: string]: unknown }, pkg: PackageJson): unknown {
  const packages = lock.packages;
  const keep = new Set<string>();
  const visit = (from: string, deps: Record<string, string> | undefined, optional: boolean) => {
    for (const name of Object.keys(deps ?? {})) {
      const at = resolveIn(packages, from, name);
      if (!at) {
        if (optional) continue;
        throw new Error(`package-lock.json has no ${name} for ${from || "the root"}`);
      }
      if (keep.has(at) || packages[at]!.link) continue;
      keep.add(at);
      const entry = packages[at]!;
      visit(at, entry.dependencies, false);
      visit(at, entry.optionalDependencies, true);
      visit(at, entry.peerDependencies, true);
    }
  };
  visit("", pkg.dependencies, false);
  visit("", pkg.devDependencies, false);
  const root: LockEntry = { name: pkg.name, version: pkg.version };
  if (pkg.dependencies) root.dependencies = pkg.dependencies;
  if (pkg.devDependencies) root.devDependencies = pkg.devDependencies;
  if (pkg.engines) root.engines = pkg.engines;
  const kept: Record<string, LockEntry> = { "": root };
  for (const key of Object.keys(packages).sort()) if (keep.has(key)) kept[key] = packages[key]!;
  return { name: pkg.name, version: pkg.version, lockfileVersion: lock.lockfileVersion, requires: true, packages: kept };
}

// Node's lookup of `name` from the package installed at `from` (a lock-file path).
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut < 0 ? "" : base.slice(0, cut);
  }
}

const NOTE = {
  excerpt: {
    zh: "> （学员版省略了这段参考实现的代码摘录：这正是你要在 `labs/33-mcp-lite/starter/src/` 里自己写的部分。）",
    en: "> (The student edition leaves out this excerpt of the reference implementation: it is the part you write yourself in `labs/33-mcp-lite/starter/src/`.)",
  },
  command: {
    zh: "> （这条命令需要参考实现，只在讲师的工作簿里运行，学员版不含。）",
    en: "> (This command needs the reference implementation; it runs in the instructor's workbook only, not in the student edition.)",
  },
} as const;

// What a learner's Markdown may not keep: a command that needs the solution, the corpus or a
// script the learner repository does not have, and links to files it does not contain.
export function unavailableCommand(line: string): boolean {
  if (/--solution\b|lab:solution|labs\/33-mcp-lite\/(solution|corpus)\b|\bsolution\/|\bcorpus\//.test(line)) return true;
  for (const match of line.matchAll(/npm run ([\w:-]+)/g)) if (!(match[1]! in STUDENT_SCRIPTS)) return true;
  return false;
}

// Filters one Markdown file for the learner repository: solution excerpts become a note,
// command blocks that need what is left out become a note, other lines naming them go, and
// the workbook's tooling markers (snippet, run) are dropped.
export function filterMarkdown(text: string, lang: "zh" | "en"): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = /^<!--\s*(snippet|run):?\s*([^>]*?)\s*-->\s*$/.exec(line);
    if (marker || lines[i]!.startsWith("```")) {
      // A fenced block, possibly announced by a marker on the line before (blank lines allowed).
      let open = i;
      if (marker) {
        open = i + 1;
        while (open < lines.length && lines[open]!.trim() === "") open++;
        if (!lines[open]?.startsWith("```")) continue; // a marker without a block: drop it
      }
      let close = open + 1;
      while (close < lines.length && !lines[close]!.startsWith("```")) close++;
      const body = lines.slice(open + 1, close);
      const fromSolution = marker?.[1] === "snippet" && /solution\//.test(marker[2]!);
      if (fromSolution) out.push(NOTE.excerpt[lang]);
      else if (marker?.[1] === "run" && body.some(unavailableCommand)) out.push(NOTE.command[lang]);
      else out.push(lines[open]!, ...body.filter((l) => !unavailableCommand(l)), lines[close] ?? "```");
      i = close;
      continue;
    }
    if (unavailableCommand(line)) continue;
    out.push(line);
  }
  return out.join("\n");
}

function studentReadme(): string {
  return `# 第 33 课 MCP-lite：学员仓库

这是你的作业仓库。你要写的代码在 \`labs/33-mcp-lite/starter/src/\`（你的工作副本），课程正文在
[\`lessons/33-mcp-lite/README.md\`](lessons/33-mcp-lite/README.md)，上手步骤在 [\`docs/quick-start.md\`](docs/quick-start.md)。

先安装一次依赖（需要 Node 20 或更高版本）：\`npm ci\`。之后只需要两条命令：

\`\`\`bash
npm test          # 类型检查 + 六项证据测试，跑你的 starter
npm run grade     # 完整评分：证据 + rubric 探针 + 孤儿进程 + 作业加分，与老师用的评分器是同一份代码
\`\`\`

\`npm run grade -- --lang en\` 输出英文报告；退出码 0 通过、1 未通过、2 无法评分。
每次 push，\`.github/workflows/classroom.yml\` 会在 GitHub Actions 里跑同样的评分，并把报告放进 job summary。

| 目录 | 内容 |
|---|---|
| \`labs/33-mcp-lite/starter/\` | 你的工作副本：按 \`TODO(...)\` 的顺序实现 |
| \`labs/33-mcp-lite/tests/evidence/\` | 六项证据测试（\`npm test\` 跑的就是它们） |
| \`labs/33-mcp-lite/probes/\` | rubric 探针，评分时运行 |
| \`labs/33-mcp-lite/homework/\` | 课后作业（加分项），见其中的 README |
| \`fixtures/\` | 测试用的 MCP-lite 服务器 |
| \`grader/\` | 评分器 |

本仓库不含参考实现。

## English

Your working copy is \`labs/33-mcp-lite/starter/src/\`; the lesson is \`lessons/33-mcp-lite/README.en.md\`.
Install once with \`npm ci\` (Node 20+), then: \`npm test\` (type check + the six evidence tests on your
starter) and \`npm run grade -- --lang en\` (the full grade: evidence, rubric probes, orphan probe,
homework bonus; exit 0 pass, 1 fail, 2 could not grade). This repository does not contain the
reference solution.
`;
}

async function main(argv: string[]): Promise<number> {
  const [kind, out] = argv;
  if ((kind !== "student" && kind !== "gradescope") || !out) {
    process.stderr.write("usage: npm run dist -- student OUT_DIR | gradescope OUT_ZIP\n");
    return 2;
  }
  if (kind === "student") buildStudent(resolve(out));
  else buildGradescope(resolve(out));
  process.stdout.write(`${resolve(out)}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`dist: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
