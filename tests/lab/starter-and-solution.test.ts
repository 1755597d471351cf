// The workbook checks itself both ways: the starter shares the solution's surface and
// fails exactly the evidence tests it is meant to fail; the solution passes all six
// (it runs in the "lab" project of this suite).
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../../fixtures/index.ts";

const labDir = join(import.meta.dirname, "..", "..", "labs", "33-mcp-lite");
const root = join(labDir, "..", "..");

describe("starter and solution", () => {
  const GIVEN_BANNER = /^\/\/ 给定文件（GIVEN）[^\n]*\n\/\/ Given file[^\n]*\n/;
  const starterFiles = readdirSync(join(labDir, "starter", "src")).filter((f) => f.endsWith(".ts"));
  const read = (dir: string, file: string) => readFileSync(join(labDir, dir, "src", file), "utf8");
  const isGiven = (file: string) => GIVEN_BANNER.test(read("starter", file));

  it("share the public contract of docs/client-contract.md: the entry's exports and McpClient's members", async () => {
    const load = (dir: string) => import(join(labDir, dir, "src", "mcp-client.ts"));
    const [solution, starter] = await Promise.all([load("solution"), load("starter")]);
    expect(Object.keys(starter).sort()).toEqual(Object.keys(solution).sort());
    for (const name of ["McpClient", "McpError"]) expect(typeof starter[name], name).toBe("function");
    const members = (cls: { prototype: object }) => Object.getOwnPropertyNames(cls.prototype);
    for (const name of ["pendingCount", "pid", "initialized", "stderr", "initialize", "listTools", "callTool", "close"]) {
      expect(members(solution.McpClient), name).toContain(name);
      expect(members(starter.McpClient), name).toContain(name);
    }
  });

  it("mark the given files with a banner, and hand over the solution's errors.ts and options.ts unchanged (less the mutation tool's comments)", () => {
    // The solution's `// Stryker disable …` lines are for `npm run mutation`, which mutates the
    // solution only: the learner's copies leave them out and are otherwise the same, line for line.
    const withoutStryker = (text: string) => text.split("\n").filter((line) => !/^\s*\/\/ Stryker /.test(line)).join("\n");
    for (const file of ["errors.ts", "options.ts"]) {
      expect(isGiven(file), file).toBe(true);
      expect(read("starter", file), file).not.toMatch(/Stryker/);
      expect(read("starter", file).replace(GIVEN_BANNER, ""), file).toBe(withoutStryker(read("solution", file)));
    }
    for (const file of ["protocol.ts", "todo.ts"]) expect(isGiven(file), file).toBe(true);
  });

  it("hold only what the learner writes besides the given files: every other file has a TODO(...) marker", () => {
    const own = starterFiles.filter((file) => !isGiven(file));
    expect(own).toContain("mcp-client.ts");
    for (const file of own) expect(read("starter", file), file).toMatch(/TODO\(/);
    for (const file of starterFiles.filter(isGiven)) expect(read("starter", file), file).not.toMatch(/\bTODO\((?!\$\{)/);
  });

  it("list every TODO tag of the starter in one ordered index, the manifest's order", async () => {
    const { lab } = await import("../../labs/33-mcp-lite/lab.ts");
    const tags = new Set<string>();
    for (const file of starterFiles) for (const m of read("starter", file).matchAll(/TODO\(([^)$]+)\)/g)) tags.add(m[1]!);
    const order = lab.todos!.map((t) => t.tag);
    expect([...tags].sort()).toEqual([...order].sort());
    const index = read("starter", "mcp-client.ts").split("\n\n")[0]!.replace(/^\/\/ ?/gm, "");
    const rows = [...index.matchAll(/^\s*(\d+)\s+(\S.*?)\s{2,}§/gm)].map((m) => [Number(m[1]), m[2]!.trim()]);
    expect(rows).toEqual(order.map((tag, i) => [i + 1, tag]));
  });

  it("marks the starter's first task as the pending request map", () => {
    const source = read("starter", "mcp-client.ts");
    expect(source).toContain("TODO(实现 MCP pending request map)");
    expect(source).toContain("currentResolve");
  });

  it("lets the starter pass the happy path and fail the other five evidence tests, without hanging", async () => {
    const temp = makeTempDir("lab33-starter-");
    try {
      const out = join(temp.dir, "result.json");
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [join(root, "scripts", "lab-test.mjs"), "starter", "--reporter=json", `--outputFile=${out}`],
          // The default hang deadline: a shorter one could call the starter's happy path hung
          // on a loaded machine, and this test pins that it passes.
          { cwd: root, stdio: "ignore" },
        );
        child.once("error", reject);
        child.once("exit", resolve);
      });
      expect(code).toBe(1);
      const report = JSON.parse(readFileSync(out, "utf8"));
      const outcome: Record<string, string> = {};
      for (const file of report.testResults) {
        for (const test of file.assertionResults) outcome[test.ancestorTitles[0]] = test.status;
      }
      expect(outcome).toEqual({
        "evidence/happy-path": "passed",
        "evidence/out-of-order": "failed",
        "evidence/remote-error": "failed",
        "evidence/timeout": "failed",
        "evidence/abort": "failed",
        "evidence/server-exit": "failed",
      });
    } finally {
      temp.cleanup();
    }
  });
});
