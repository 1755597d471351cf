// Runs the whole benchmark in its tiny mode, so the harness cannot rot unnoticed. It checks
// that every measurement produced a result and that the outcomes the clients must show
// (the flood refused with MCP_PROTOCOL_ERROR, big arguments answered) are there. It makes
// no claim about any time.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { BenchResults } from "../../bench/results.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BENCH_SERVER = /bench\/(echo|sdk)-server\.mjs/;

// Bench servers whose parent is not a live bench worker: processes a run left behind.
function strayBenchServers(): string[] {
  if (process.platform !== "linux") return [];
  const args = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      return "";
    }
  };
  const parent = (pid: string) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "";
    } catch {
      return "";
    }
  };
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid) && BENCH_SERVER.test(args(pid)))
    .filter((pid) => !args(parent(pid)).includes("bench/worker.ts"))
    .map((pid) => `${pid}: ${args(pid)}`);
}

describe("npm run bench -- --quick", () => {
  it("measures every client and task, writes the result file and the document, and leaves no server behind", { timeout: 180_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), "lab33-bench-smoke-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, "result.json");
    const doc = join(dir, "performance.md");
    const tsx = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
    const run = spawnSync(process.execPath, [tsx, "bench/run.ts", "--quick", "--out", out, "--doc", doc], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 170_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("## Goals");

    const results = JSON.parse(readFileSync(out, "utf8")) as BenchResults;
    expect(results.mode).toBe("quick");
    expect(results.failures).toEqual([]);
    expect(results.sections.map((section) => section.id)).toEqual(["clients", "pairings", "flood", "grader", "startup"]);

    const clients = results.sections.find((section) => section.id === "clients")!;
    for (const row of clients.rows) {
      for (const column of ["floor", "reference", "sdk"]) {
        expect(Number.isFinite(row.cells[column]?.median), `${row.id} ${column}: ${row.cells[column]?.note}`).toBe(true);
      }
    }
    const pairings = results.sections.find((section) => section.id === "pairings")!;
    for (const column of ["floor", "reference", "sdk"]) {
      expect(Number.isFinite(pairings.rows.find((row) => row.id === "pair-rtt-sdk")?.cells[column]?.median)).toBe(true);
    }

    const goals = Object.fromEntries(results.goals.map((goal) => [goal.id, goal]));
    expect(goals.flood?.detail).toContain("MCP_PROTOCOL_ERROR in 1/1 runs");
    expect(goals["large-argument"]?.detail).toContain("answered correctly in 1/1 runs");
    expect(goals["grade-solution"]?.met).toBeNull(); // quick mode does not grade

    expect(existsSync(doc)).toBe(true);
    expect(readFileSync(doc, "utf8")).toContain("| cold start, spawn to first tools/list answer (lower is better) |");
    expect(strayBenchServers()).toEqual([]);
  });
});
