// A learner's walk through the student edition, as a course hands it out: `npm run dist --
// student` builds it, `npm ci --offline` installs it from its own lock file, and every command
// its README, quick start, lab READMEs and lessons name (in ```bash blocks and inline) is run
// there at three stages of the work: the untouched starters, a half-done copy (lesson 13
// finished; lesson 33 everything but the protocol version check) and a finished copy. Each
// command must exit as the stage implies and show the learner's progress; none may need
// anything the edition lacks. The edition's text is also searched for sentences cut short.

import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listCorpus, materialize } from "../../grader/corpus.ts";
import { buildStudent, ROOT } from "../../scripts/dist.ts";
import { extractCommands, plain } from "../../lessons/tools/commands.ts";
import { cutSentences } from "../../lessons/tools/cut-sentences.ts";
import { walkCommands, expectation, type Stage } from "./walk-plan.ts";

const STAGES: Stage[] = ["starter", "half-done", "finished"];
/** Hang deadline of the tests the commands run, in ms: 2.5 times a learner's, for a loaded machine
 *  (a correct client answers these fixtures in milliseconds; the starters' hangs wait this long). */
const HANG_MS = "5000";
/** Wall-clock limit of one command, in ms. */
const COMMAND_MS = 300_000;

/** The edition's files that name commands for the learner. */
const TEXTS = ["README.md", "docs/quick-start.md", "labs/33-mcp-lite/README.md", "labs/33-mcp-lite/README.en.md", "lessons/33-mcp-lite/README.md", "lessons/33-mcp-lite/README.en.md", "lessons/13-process-boundary/README.md", "lessons/13-process-boundary/README.en.md"];

// Built while the tests are collected (it takes under a second), so the commands to walk are
// read from the edition itself; installed and staged before the first test.
const parent = mkdtempSync(join(tmpdir(), "lab33-walk-"));
const edition = join(parent, "edition");
buildStudent(edition);
const repos = new Map<Stage, string>();

// The edition with its learner copies at a stage, sharing the installed node_modules.
function repoAt(stage: Stage): string {
  const dir = join(parent, stage);
  if (stage === "starter") return edition;
  cpSync(edition, dir, { recursive: true, filter: (src) => !src.startsWith(join(edition, "node_modules")) });
  symlinkSync(join(edition, "node_modules"), join(dir, "node_modules"), "dir");
  const put = (lab: string, source: string) => {
    const starter = join(dir, "labs", lab, "starter");
    rmSync(starter, { recursive: true, force: true });
    cpSync(source, starter, { recursive: true });
  };
  put("13-process-boundary", join(ROOT, "labs", "13-process-boundary", "solution"));
  let solution = join(ROOT, "labs", "33-mcp-lite", "solution");
  if (stage === "half-done") {
    const entry = listCorpus(join(ROOT, "labs", "33-mcp-lite")).find((e) => e.name === "no-version-check")!;
    solution = materialize(entry, solution, join(parent, "work"));
  }
  put("33-mcp-lite", solution);
  return dir;
}

// Runs one command as a learner would (bash, from the repository root), without this suite's
// own variables; its exit status and plain output.
function runIn(dir: string, command: string): Promise<{ code: number | null; output: string; ms: number }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(LAB|VITEST|NODE_V8_COVERAGE|NODE_OPTIONS|NODE_ENV|TEST$)/.test(name)));
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", command], { cwd: dir, env: { ...env, FORCE_COLOR: "0", NO_COLOR: "1", LAB_HANG_MS: HANG_MS }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), COMMAND_MS);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, output: plain(output), ms: Date.now() - started });
    });
  });
}

const read = (file: string) => readFileSync(join(edition, file), "utf8");
const commands = () => walkCommands(TEXTS.map((file) => ({ file, text: read(file) })), extractCommands);
const timings: string[] = [];
// "language" for the English variant of another command the texts name, "run" for
// lab:starter's one-test and watch runs, undefined for a base command.
function variantOf(command: string): "language" | "run" | undefined {
  const zh = command.replace(/^LAB_LANG=en /, "").replace(/ --lang en\b/, "").replace(/ --$/, "");
  if (zh !== command && commands().some((c) => c.command === zh)) return "language";
  return /^npm run lab:starter -- (--watch|timeout)$/.test(command) ? "run" : undefined;
}

beforeAll(async () => {
  const ci = await runIn(edition, "npm ci --offline --no-audit --no-fund --loglevel=error");
  if (ci.code !== 0) throw new Error(`npm ci --offline failed in the student edition:\n${ci.output}`);
  for (const stage of STAGES) repos.set(stage, repoAt(stage));
}, COMMAND_MS);

afterAll(() => {
  if (timings.length > 0) process.stderr.write(`walk timings:\n  ${timings.join("\n  ")}\n`);
  rmSync(parent, { recursive: true, force: true });
});

describe("the student edition's text", () => {
  it("names the learner's commands: the lab loop, the grade and the self-check of both lessons", () => {
    const names = commands().map((c) => c.command);
    for (const command of ["npm ci", "npm test", "npm run lab:starter", "npm run grade", "npm run verify:lesson -- 33", "npm run lab:starter -- --lab 13", "npm run grade -- --lab 13-process-boundary", "npm run verify:lesson -- 13", "npm run lab:starter -- --watch"]) {
      expect(names).toContain(command);
    }
  });

  it("has no sentence cut short, in Chinese or in English", () => {
    const cuts = [...TEXTS, "docs/client-contract.md", "labs/33-mcp-lite/homework/README.md"].flatMap((file) => cutSentences(read(file)).map((c) => `${file}:${c.line}: ${c.text}`));
    expect(cuts).toEqual([]);
  });

  it("lists the lab's files as the edition holds them: no solution, corpus or project tests", () => {
    const lab = readdirSync(join(edition, "labs", "33-mcp-lite")).sort();
    expect(lab).toEqual(["README.en.md", "README.md", "homework", "host", "lab.ts", "probes", "starter", "test-titles.ts", "tests", "vitest.config.ts"]);
    expect(readdirSync(join(edition, "labs", "13-process-boundary")).sort()).toEqual(["lab.ts", "starter", "tests", "vitest.config.ts"]);
  });
});

for (const stage of STAGES) {
  describe.sequential(`a learner at the ${stage} stage`, () => {
    for (const command of commands()) {
      if (command.command === "npm ci") continue; // installed above, offline
      // A variant runs the same code as its base command, which runs at every stage: an English
      // variant once on the finished copy (where it is fast), the one-test and no-terminal watch
      // runs once on the untouched starter. The English grade report runs at every stage, since
      // its TODO names differ from the Chinese ones.
      const variant = variantOf(command.command);
      if (variant === "language" && stage !== "finished" && !/^npm run grade -- --lang en$/.test(command.command)) continue;
      if (variant === "run" && stage !== "starter") continue;
      const want = expectation(command.command, stage);
      it(`\`${command.command}\` exits ${want.exit}${want.contains.length > 0 ? ` and shows ${want.contains.map((c) => JSON.stringify(c)).join(", ")}` : ""}`, async () => {
        const outcome = await runIn(repos.get(stage)!, command.run);
        timings.push(`${stage}: ${command.command}: ${outcome.ms} ms`);
        const tail = outcome.output.trimEnd().split("\n").slice(-40).join("\n");
        expect(outcome.code, `${command.run}\n${tail}`).toBe(want.exit);
        for (const text of want.contains) expect(outcome.output, `${command.run}\n${tail}`).toContain(text);
        for (const text of want.absent) expect(outcome.output, `${command.run}\n${tail}`).not.toContain(text);
      }, COMMAND_MS + 15_000);
    }
  });
}
