// The two self-checks of a lesson, run as a learner and a maintainer would: the learner's
// verify:lesson passes on the untouched starters (not finished is not a failure), and the
// maintainers' verify:maintainer pins both labs (solution passes, starter fails exactly as
// pinned). Lesson 33's commands are run by commands.test.ts, so its maintainer run skips them.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LESSON_RUN_ENV } from "../../lessons/tools/commands.ts";
import { ROOT } from "../../lessons/tools/snippets.ts";

interface Report {
  mode: string;
  ok: boolean;
  steps: Array<{ id: string; status: string; details: string[] }>;
}

function verify(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; report: Report; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "lab-verify-"));
  const json = join(dir, "report.json");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "scripts", "verify-lesson.ts"), ...args, "--json", json], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c));
    child.stderr.on("data", (c: Buffer) => (output += c));
    child.once("error", reject);
    child.once("close", (code) => {
      try {
        resolve({ code, report: JSON.parse(readFileSync(json, "utf8")) as Report, output });
      } catch (error) {
        reject(new Error(`no report (exit ${code}): ${output.slice(-2000)}`, { cause: error }));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

// One at a time, and with a wider hang margin for the graded runs: the suite runs on a loaded
// machine, where a correct client can take longer than a learner's 2 s to answer.
const LOADED = { LAB_HANG_MS: "6000" };

describe.sequential("verify:lesson and verify:maintainer", () => {
  it("the learner's self-check of lesson 13 passes on the untouched starter and shows the next TODO", { timeout: 300_000 }, async () => {
    const { code, report, output } = await verify(["13", "--lang", "en"]);
    expect(code, output).toBe(0);
    expect(report.mode).toBe("learner");
    expect(report.steps.map((s) => [s.id, s.status])).toEqual([["environment", "pass"], ["lesson", "pass"], ["manifest", "pass"], ["copy", "pass"]]);
    expect(output).toContain("next: TODO(no-shell)");
  });

  it("the learner's self-check fails, naming the file, when the copy cannot be graded", { timeout: 300_000 }, async () => {
    const { code, report } = await verify(["33", "--submission", join(ROOT, "labs", "33-mcp-lite", "corpus", "syntax-error")]);
    expect(code).toBe(1);
    const copy = report.steps.find((s) => s.id === "copy")!;
    expect(copy.status).toBe("fail");
    expect(copy.details.join("\n")).toContain("src/mcp-client.ts");
  });

  it("the maintainers' check of lesson 13 pins its solution and starter and runs every command of the lesson", { timeout: 600_000 }, async () => {
    const { code, report, output } = await verify(["13", "--maintainer"], LOADED);
    expect(code, output).toBe(0);
    expect(report.steps.map((s) => [s.id, s.status])).toEqual([
      ["lesson", "pass"], ["snippets", "pass"], ["manifest", "pass"], ["todos", "pass"], ["solution", "pass"], ["starter", "pass"], ["commands", "pass"],
    ]);
  });

  it("the maintainers' check of lesson 33 pins its solution and starter (its commands run in commands.test.ts)", { timeout: 600_000 }, async () => {
    const { code, report, output } = await verify(["33", "--maintainer"], { ...LOADED, [LESSON_RUN_ENV]: "1" });
    expect(code, output).toBe(0);
    expect(report.steps.find((s) => s.id === "starter")?.status).toBe("pass");
    expect(report.steps.find((s) => s.id === "solution")?.status).toBe("pass");
    expect(report.steps.find((s) => s.id === "commands")?.status).toBe("skip");
  });
});
