// The command line (CONTRACT §2): exit 2 with a result file for a submission that cannot
// be graded, --from re-renders a saved result, bad flags are refused (and still leave a
// result file), and --batch grades a folder into a CSV and JSON gradebook. Most cases call
// runCli in-process; one runs the real `grader/cli.ts` to prove the wiring and exit status.

import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../grader/cli-main.ts";
import { ROOT } from "../../grader/grade.ts";
import { GRADE_TEST_TIMEOUT_MS } from "./pool.ts";

const corpus = join(ROOT, "labs", "33-mcp-lite", "corpus");
const work = mkdtempSync(join(tmpdir(), "lab33-cli-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The real command, as npm run grade starts it.
function spawnCli(args: string[]) {
  const tsx = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
  return spawnSync(process.execPath, [tsx, join(ROOT, "grader", "cli.ts"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
}

// The same command line in-process, with its output captured.
async function cli(args: string[]) {
  let stdout = "";
  let stderr = "";
  const status = await runCli(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { status, stdout, stderr };
}

describe("grade CLI", () => {
  it("exits 2 and still writes the result file when the submission cannot be graded", { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
    const json = join(work, "missing-export.json");
    const out = join(work, "missing-export.xml");
    const run = await cli(["--submission", join(corpus, "missing-export"), "--json", json, "--out", out, "--lang", "en", "--seed", "9", "--format", "junit"]);
    expect(run.status).toBe(2);
    const result = JSON.parse(readFileSync(json, "utf8"));
    expect(result).toMatchObject({ lab: "33-mcp-lite", status: "error", seed: 9, message: expect.stringContaining("McpError") });
    expect(run.stdout).toContain("<testsuites");
    expect(readFileSync(out, "utf8")).toBe(run.stdout);
  });

  it("still writes an error result when grading itself breaks", async () => {
    const json = join(work, "no-such-lab.json");
    const run = await cli(["--lab", "no-such-lab", "--json", json]);
    expect(run.status).toBe(2);
    expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({ status: "error", message: expect.stringContaining("grader failure") });
  });

  it("runs as the npm script's command, with the exit status of the saved result", () => {
    const saved = join(work, "saved-pass.json");
    writeFileSync(saved, JSON.stringify({
      version: 1, lab: "33-mcp-lite", status: "pass", score: 10, maxScore: 10, bonus: { score: 0, maxScore: 0 }, seed: 1, lang: "zh",
      submission: "x", startedAt: "", durationMs: 1, checks: [],
    }));
    const run = spawnCli(["--from", saved]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("10/10");
  });

  it("re-renders a saved result with --from in another format, keeping its exit status", async () => {
    const saved = join(work, "saved.json");
    writeFileSync(saved, JSON.stringify({
      version: 1, lab: "33-mcp-lite", status: "fail", score: 0, maxScore: 10, bonus: { score: 0, maxScore: 0 }, seed: 5, lang: "en",
      submission: "x", startedAt: "", durationMs: 1, checks: [],
    }));
    const run = await cli(["--from", saved, "--format", "exercism"]);
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ version: 3, status: "fail" });
  });

  it("refuses bad flags with exit 2, the usage text, and an error result file", async () => {
    const json = join(work, "usage.json");
    const run = await cli(["--format", "html", "--json", json]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("usage: npm run grade");
    const result = JSON.parse(readFileSync(json, "utf8"));
    expect(result).toMatchObject({ status: "error", message: expect.stringContaining("--format"), maxScore: 100 });
    // CONTRACT §2's check ids exist even when nothing could run, each reported as an error.
    const ids = result.checks.map((c: { id: string }) => c.id);
    for (const id of ["evidence/happy-path", "evidence/server-exit", "rubric/id-matching", "rubric/handshake", "probe/orphans"]) {
      expect(ids).toContain(id);
    }
    expect(new Set(result.checks.map((c: { status: string }) => c.status))).toEqual(new Set(["error"]));
    expect((await cli(["--solution", "--submission", "x"])).status).toBe(2);
    expect((await cli(["--lang", "fr"])).status).toBe(2);
    expect((await cli(["--seed", "-1"])).status).toBe(2);
    expect((await cli(["--seed", ""])).status).toBe(2);
    expect((await cli(["--hang-ms", "0"])).status).toBe(2);
    expect((await cli(["--test-workers", "0"])).status).toBe(2);
    expect((await cli(["--test-workers", "1.5"])).status).toBe(2);
    expect((await cli(["--batch", work, "--student-pattern", "("])).stderr).toContain("--student-pattern is not a regular expression");
    expect((await cli(["--batch", work, "--student-pattern", "^lab33-"])).stderr).toContain("--student-pattern needs a capture group");
    expect((await cli(["--workers", "0", "--batch", work])).status).toBe(2);
    expect((await cli(["--no-such-flag"])).status).toBe(2);
    const unknown = join(work, "unknown-flag.json");
    expect((await cli(["--no-such-flag", "--json", unknown])).status).toBe(2);
    expect(JSON.parse(readFileSync(unknown, "utf8"))).toMatchObject({ status: "error", message: expect.stringMatching(/^usage: .*--no-such-flag/) });
  });

  it("exits 2, not 1, when the --json file cannot be written", async () => {
    const blocker = join(work, "a-file");
    writeFileSync(blocker, "");
    const run = await cli(["--lang", "fr", "--json", join(blocker, "result.json")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`cannot write ${join(blocker, "result.json")}`);
  });

  it("prints the usage with --help", async () => {
    const run = await cli(["--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("--submission DIR");
  });

  it("grades a folder of submissions with --batch into a CSV and JSON gradebook", { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
    const batch = join(work, "batch");
    cpSync(join(corpus, "throw-at-import"), join(batch, "alice"), { recursive: true });
    cpSync(join(corpus, "missing-export"), join(batch, "bob"), { recursive: true });
    const run = await cli(["--batch", batch, "--workers", "2", "--lang", "en", "--seed", "4"]);
    expect(run.status).toBe(2); // both could not be graded
    const text = readFileSync(join(batch, "gradebook.csv"), "utf8");
    expect(text.startsWith("\uFEFF")).toBe(true); // the byte order mark (trim() below drops it)
    const csv = text.trim().split("\r\n");
    expect(csv[0]).toMatch(/^student,submission,status,total,max,bonus,bonusMax,evidence\/happy-path,/);
    expect(csv.slice(1).map((line) => line.split(",").slice(1, 3).join(","))).toEqual(["alice,error", "bob,error"]);
    const book = JSON.parse(readFileSync(join(batch, "gradebook.json"), "utf8"));
    expect(book.submissions.map((s: { name: string; seed: number }) => [s.name, s.seed])).toEqual([["alice", 4], ["bob", 4]]);
  });
});
