// The text side of the student edition (scripts/dist.ts builds it): its package scripts, the
// filter that turns the workbook's Markdown into the learner's (instructor-only passages out,
// solution excerpts as notes), the checks that the result is the truth (no line cut short, no
// command or file named that the edition lacks), and the edition's own README.

import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The learner repository's scripts: the two commands of its README, and their parts. */
export const STUDENT_SCRIPTS: Record<string, string> = {
  postinstall: "node scripts/build-native.mjs && node scripts/build-grader.mjs",
  test: "npm run typecheck && node scripts/lab-test.mjs starter",
  typecheck: "tsc --noEmit -p .",
  grade: "node grader/cli.mjs",
  "lab:starter": "node scripts/lab-test.mjs starter",
  "verify:lesson": "tsx scripts/verify-lesson.ts",
};

// Keeps the text of every relative Markdown link whose target the learner repository does
// not contain (the architecture notes, another lesson's solution, …) and drops the link.
export function unlinkMissing(markdown: string, dir: string): string {
  return markdown.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, text: string, target: string) => {
    if (/^(https?:|mailto:|#)/.test(target)) return whole;
    return existsSync(resolve(dir, target.split("#")[0]!)) ? whole : text;
  });
}

const NOTE = {
  excerpt: {
    zh: "> （学员版省略了这段参考实现的代码摘录：这正是你要在 `{lab}/starter/src/` 里自己写的部分。）",
    en: "> (The student edition leaves out this excerpt of the reference implementation: it is the part you write yourself in `{lab}/starter/src/`.)",
  },
  command: {
    zh: "> （这条命令需要参考实现，只在讲师的工作簿里运行，学员版不含。）",
    en: "> (This command needs the reference implementation; it runs in the instructor's workbook only, not in the student edition.)",
  },
} as const;

// What a learner's Markdown may not keep: a command that needs the solution, the corpus or a
// script the learner repository does not have, and links to files it does not contain.
export function unavailableCommand(line: string): boolean {
  if (/--solution\b|lab:solution|labs\/\d+-[\w-]+\/(solution|corpus)\b|\bsolution\/|\bcorpus\//.test(line)) return true;
  if (/npm (test|run \S+) --workspace\b|\bpnpm\b/.test(line)) return true;
  for (const match of line.matchAll(/npm run ([\w:-]+)/g)) if (!(match[1]! in STUDENT_SCRIPTS)) return true;
  return false;
}

/** Opens and closes a passage of the workbook's Markdown that the student edition leaves out whole. */
const INSTRUCTOR_OPEN = /^<!--\s*instructor-only\s*-->\s*$/;
const INSTRUCTOR_CLOSE = /^<!--\s*\/instructor-only\s*-->\s*$/;

// Filters one Markdown file for the learner repository: instructor-only passages go, solution
// excerpts become a note, command blocks that need what is left out become a note, other lines
// naming them go, and the workbook's tooling markers (snippet, run) are dropped. What it cuts
// besides the instructor-only passages is a defect of the source text (editionProblems says so).
export function filterMarkdown(text: string, lang: "zh" | "en"): string {
  return filterLines(text, lang).out.join("\n");
}

// Where the filter would cut a line or a command block outside an instructor-only passage:
// the edition would then hold a sentence cut short or a command announced and missing. Each
// problem is "line N: text".
export function editionProblems(text: string): string[] {
  return filterLines(text, "en").cuts.map((c) => `line ${c.line}: ${c.text.trim()}`);
}

function filterLines(text: string, lang: "zh" | "en"): { out: string[]; cuts: Array<{ line: number; text: string }> } {
  const lines = text.split("\n");
  const out: string[] = [];
  const cuts: Array<{ line: number; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (INSTRUCTOR_OPEN.test(line)) {
      while (i < lines.length && !INSTRUCTOR_CLOSE.test(lines[i]!)) i++;
      // Keep one blank line where the passage was, so the paragraphs around it stay apart.
      if (out.length > 0 && out[out.length - 1] !== "" && lines[i + 1]?.trim() !== "") out.push("");
      continue;
    }
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
      // (The lab the excerpt is from: its starter is where the learner writes that part.)
      if (fromSolution) out.push(NOTE.excerpt[lang].replace("{lab}", /^(labs\/[^/]+)\//.exec(marker[2]!)?.[1] ?? "labs/33-mcp-lite"));
      else if (marker?.[1] === "run" && body.some(unavailableCommand)) {
        out.push(NOTE.command[lang]);
        cuts.push({ line: open + 2, text: body.find(unavailableCommand)! });
      } else {
        body.forEach((l, k) => {
          if (unavailableCommand(l)) cuts.push({ line: open + k + 2, text: l });
        });
        out.push(lines[open]!, ...body.filter((l) => !unavailableCommand(l)), lines[close] ?? "```");
      }
      i = close;
      continue;
    }
    if (unavailableCommand(line)) {
      cuts.push({ line: i + 1, text: line });
      continue;
    }
    out.push(line);
  }
  return { out, cuts };
}

/** Top-level folders of the workbook whose paths a learner's text may name. */
const NAMED_ROOTS = /^(labs|lessons|docs|fixtures|grader|scripts|packages|tests|bench)\//;
/** Paths named relative to a lab folder (the lab README, the lesson's tables). */
const LAB_RELATIVE = /^(starter|solution|tests|probes|homework|corpus)\//;

// The files and folders a Markdown text names in backticks or links that the learner
// repository `out` does not hold: repository paths, paths inside a lab, and bare file names
// (`notifications.ts`) that no file of the repository carries.
export function missingNames(markdown: string, file: string, out: string, files: readonly string[]): string[] {
  const names = new Set<string>();
  for (const m of markdown.matchAll(/`([^`\s]+)`/g)) names.add(m[1]!);
  for (const m of markdown.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) if (!/^(https?:|mailto:)/.test(m[1]!)) names.add(m[1]!);
  const labs = readdirSync(join(out, "labs")).map((name) => join(out, "labs", name));
  const basenames = new Set(files.map((f) => f.slice(f.lastIndexOf("/") + 1)));
  const missing: string[] = [];
  for (const raw of names) {
    if (/[<>{}$]/.test(raw)) continue; // a placeholder such as <name>.test.ts
    const name = raw.replace(/[:#].*$/, "").replace(/[),.;，。；]+$/, "");
    const path = name.replace(/\/\*.*$/, "/").replace(/\*.*$/, "");
    if (!path) continue;
    const fileLike = path.endsWith("/") || /\.\w+$/.test(path);
    let found: boolean;
    if (NAMED_ROOTS.test(path) || path.startsWith("../") || path.startsWith("./") || (LAB_RELATIVE.test(path) && fileLike)) {
      found = [out, dirname(file), ...labs].some((base) => existsSync(resolve(base, path)));
    } else if (/^[\w.-]+\.(ts|mjs|js|json|md|yml)$/.test(path) && !path.startsWith(".")) {
      found = basenames.has(path);
    } else continue;
    if (!found) missing.push(raw);
  }
  return missing;
}

export function studentReadme(): string {
  return `# 第 33 课 MCP-lite：学员仓库

这是你的作业仓库，含两课：前置的第 13 课“进程边界”和第 33 课 MCP-lite。你要写的代码在
\`labs/13-process-boundary/starter/src/\` 和 \`labs/33-mcp-lite/starter/src/\`（你的工作副本）；课程正文在
[\`lessons/13-process-boundary/README.md\`](lessons/13-process-boundary/README.md) 和
[\`lessons/33-mcp-lite/README.md\`](lessons/33-mcp-lite/README.md)，上手步骤在 [\`docs/quick-start.md\`](docs/quick-start.md)。

先安装一次依赖（需要 Node 20 或更高版本）：

\`\`\`bash
npm ci
\`\`\`

之后常用的命令：

\`\`\`bash
npm test                      # 类型检查 + 第 33 课的六项证据测试，跑你的 starter
npm run grade                 # 完整评分：证据 + rubric 探针 + 孤儿进程 + 作业加分，与老师用的评分器是同一份代码
npm run verify:lesson -- 33   # 学员自检：环境、课程、你的副本能否评分、做到了哪一步
\`\`\`

\`npm run grade -- --lang en\` 输出英文报告；退出码 0 通过、1 未通过、2 无法评分。第 13 课用同样的命令加上
\`--lab\`：\`npm run lab:starter -- --lab 13\`、\`npm run grade -- --lab 13-process-boundary\`。
每次 push，\`.github/workflows/classroom.yml\` 会在 GitHub Actions 里跑同样的评分，并把报告放进 job summary。

| 目录 | 内容 |
|---|---|
| \`labs/33-mcp-lite/starter/\` | 你的工作副本：按 \`TODO(...)\` 的顺序实现（文件清单见 \`labs/33-mcp-lite/README.md\`） |
| \`labs/33-mcp-lite/tests/evidence/\` | 六项证据测试（\`npm test\` 跑的就是它们） |
| \`labs/33-mcp-lite/probes/\` | rubric 探针，评分时运行 |
| \`labs/33-mcp-lite/homework/\` | 课后作业（加分项），见其中的 README |
| \`labs/13-process-boundary/\` | 第 13 课的实验：starter 与证据测试 |
| \`fixtures/\` | 测试用的 MCP-lite 服务器（\`fixtures/mcp-server.mjs\` 的文件头列出全部场景） |
| \`grader/\` | 评分器 |
| \`docs/demos/naive-clients.ts\` | 第 33 课第 6 节的失败实现（反模式，不要照抄） |

本仓库不含参考实现。

## English

This repository holds two lessons: lesson 13 (the process boundary, the prerequisite) and lesson 33 (MCP-lite).
Your working copies are \`labs/13-process-boundary/starter/src/\` and \`labs/33-mcp-lite/starter/src/\`; the lessons are
\`lessons/13-process-boundary/README.en.md\` and \`lessons/33-mcp-lite/README.en.md\`. Install once with \`npm ci\` (Node 20+),
then: \`npm test\` (type check + lesson 33's six evidence tests on your starter), \`npm run grade -- --lang en\` (the full
grade: evidence, rubric probes, orphan probe, homework bonus; exit 0 pass, 1 fail, 2 could not grade) and
\`npm run verify:lesson -- 33 --lang en\` (the self-check, right at every stage). Lesson 13 takes the same commands with
\`--lab\`: \`npm run lab:starter -- --lab 13 --lang en\`, \`npm run grade -- --lab 13-process-boundary --lang en\`.
This repository does not contain the reference solution.
`;
}
