// `npm run mutation [-- module.ts ...]`: StrykerJS over the reference client and the
// modules of @coding-agent/extensions that were once part of it, one module at a time
// (concurrency 1: the machine is shared), each with the smallest test set that exercises
// it: tests/unit for every reference module but mcp-client.ts, which runs against the unit
// and client tests and the hardening client guards; the package's unit tests for its
// tool-adapter.ts, tool-schema.ts and server-manager.ts (vitest.mutation.config.ts).
// `-- --grader` runs every reference module against the lab's graded tests instead (evidence
// and probes as a grade runs them, vitest.grader-mutation.config.ts): the grader's own score.
// Prints one line per module and a summary; exits 1 when a module scores under 90 %.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

const SRC = "labs/33-mcp-lite/solution/src";
const REPORT = "reports/mutation/mutation.json";
const MIN_SCORE = 90;
// The module whose behaviour is only seen through a live MCP server (the fixture): its
// mutants need the client tests; every other module has unit tests of its own.
const NEEDS_PROCESS = new Set(["mcp-client.ts"]);
// Modules that live in the package, each with its home folder; their tests are the package's.
const PACKAGE = "packages/extensions/src";
// (heartbeat.ts, server-manager-options.ts and failure-record.ts were split out of server-manager.ts there.)
const PACKAGE_MODULES = ["failure-record.ts", "heartbeat.ts", "server-manager-options.ts", "server-manager.ts", "tool-adapter.ts", "tool-schema.ts"];

// --grader: the lab's graded tests (evidence and probes) are the only suite, for every module.
const grader = process.argv.includes("--grader");
const wanted = process.argv.slice(2).filter((arg) => arg !== "--grader").map((name) => basename(name));
const modules = wanted.length > 0 ? wanted : [...readdirSync(SRC).filter((f) => f.endsWith(".ts")).sort(), ...(grader ? [] : PACKAGE_MODULES)];
const rows = [];
for (const module of modules) {
  const inPackage = PACKAGE_MODULES.includes(module);
  const tests = grader ? "grader" : inPackage ? "extensions" : NEEDS_PROCESS.has(module) ? "client" : "unit";
  const run = spawnSync("npx", ["stryker", "run", "--mutate", join(inPackage ? PACKAGE : SRC, module)], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, MUTATION_TESTS: tests },
  });
  if (run.status !== 0) {
    rows.push({ module, tests, score: null, killed: 0, survived: 0, noCoverage: 0, ignored: 0 });
    continue;
  }
  copyFileSync(REPORT, REPORT.replace("mutation.json", `${module}.json`)); // kept per module
  rows.push({ module, tests, ...score(JSON.parse(readFileSync(REPORT, "utf8")), module) });
}

mkdirSync("reports/mutation", { recursive: true });
writeFileSync("reports/mutation/summary.json", `${JSON.stringify(rows, null, 2)}\n`);
console.log("\nmodule                tests  score   killed survived no-cov equivalent");
for (const r of rows) {
  const score = r.score === null ? "   error" : `${r.score.toFixed(1).padStart(6)} %`;
  const counts = [String(r.killed).padStart(6), String(r.survived).padStart(8), String(r.noCoverage).padStart(6), String(r.ignored).padStart(10)];
  console.log(`${r.module.padEnd(21)} ${r.tests.padEnd(6)} ${score} ${counts.join(" ")}`);
}
const low = rows.filter((r) => r.score === null || r.score < MIN_SCORE);
if (low.length > 0) {
  console.log(`\nunder ${MIN_SCORE} %: ${low.map((r) => r.module).join(", ")}`);
  process.exit(1);
}

// Stryker's score: (killed + timeout) / (all valid mutants); mutants disabled with a
// `// Stryker disable` comment (the equivalent ones, each explained there) do not count.
/** @param {{ files: Record<string, { mutants: Array<{ status: string }> }> }} report @param {string} module */
function score(report, module) {
  const file = Object.entries(report.files).find(([path]) => path.endsWith(`/${module}`));
  const mutants = file ? file[1].mutants : [];
  const count = (/** @type {string} */ status) => mutants.filter((m) => m.status === status).length;
  const killed = count("Killed") + count("Timeout");
  const survived = count("Survived");
  const noCoverage = count("NoCoverage");
  const valid = killed + survived + noCoverage;
  return { score: valid === 0 ? 100 : (100 * killed) / valid, killed, survived, noCoverage, ignored: count("Ignored") };
}
