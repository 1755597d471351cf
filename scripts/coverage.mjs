// npm run coverage: line and branch coverage of the reference solution, the grader and
// the fixtures, with the thresholds CI keeps.
//
// Vitest measures what runs inside its workers (the solution, the grader, fixtures/index.ts).
// The fixture server runs in child processes vitest never sees, so each of those writes its
// own V8 coverage (fixtures/coverage-hook.mjs, switched on by LAB33_FIXTURE_COVERAGE_DIR);
// this script merges those runs, converts them to istanbul form and adds them to the report.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "node_modules", "@vitest", "coverage-v8", "package.json"));
const { convert } = await import(pathToFileURL(require.resolve("ast-v8-to-istanbul")).href);
// These ship with @vitest/coverage-v8 and have no bundled types.
const load = (/** @type {string} */ name) => /** @type {any} */ (require(name));
const libCoverage = load("istanbul-lib-coverage");
const libReport = load("istanbul-lib-report");
const reports = load("istanbul-reports");
const { mergeProcessCovs } = load("@bcoe/v8-coverage");
const { parseAstAsync } = await import("vite");

/** Minimum percentages per group; a group below its line or branch minimum fails the run. */
const THRESHOLDS = {
  "labs/33-mcp-lite/solution/src/": { lines: 90, branches: 80 },
  "packages/extensions/src/": { lines: 90, branches: 75 },
  "grader/": { lines: 90, branches: 60 },
  "fixtures/": { lines: 80, branches: 70 },
};

const coverageDir = join(root, "coverage");
// Outside coverage/, which vitest empties when it starts.
const rawDir = mkdtempSync(join(tmpdir(), "lab33-fixture-v8-"));
process.on("exit", () => rmSync(rawDir, { recursive: true, force: true }));

// 1. The whole suite with vitest's own coverage (json for merging, a summary for the log).
const vitest = spawnSync(
  process.execPath,
  [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--coverage", "--coverage.reporter=json", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit", env: { ...process.env, LAB33_FIXTURE_COVERAGE_DIR: rawDir } },
);
const finalJson = join(coverageDir, "coverage-final.json");
if (!existsSync(finalJson)) {
  console.error("coverage: vitest wrote no coverage-final.json");
  process.exit(vitest.status || 1);
}
const map = libCoverage.createCoverageMap(JSON.parse(readFileSync(finalJson, "utf8")));

// 2. The fixture server's own processes: merge every run, then convert once.
const runs = readdirSync(rawDir)
  .filter((file) => file.endsWith(".json"))
  .map((file) => JSON.parse(readFileSync(join(rawDir, file), "utf8")));
const server = join(root, "fixtures", "mcp-server.mjs");
if (runs.length > 0) {
  const merged = mergeProcessCovs(runs);
  const script = merged.result.find((/** @type {{ url: string }} */ entry) => entry.url === pathToFileURL(server).href);
  if (script) {
    const code = readFileSync(server, "utf8");
    const data = await convert({ ast: parseAstAsync(code), code, wrapperLength: 0, coverage: script });
    const serverMap = libCoverage.createCoverageMap(data);
    // Vitest lists the server as never loaded (0 %); the child-process data replaces that entry.
    const fromVitest = map.data[server];
    if (fromVitest) delete map.data[server];
    map.merge(serverMap);
  }
}
console.log(`\ncoverage: merged ${runs.length} snapshot(s) of fixture-server processes into the report\n`);

// 3. Report: per-file text, a JSON summary, and an HTML report for browsing.
const context = libReport.createContext({ dir: coverageDir, coverageMap: map, defaultSummarizer: "nested" });
for (const name of ["text", "json-summary", "html"]) reports.create(name).execute(context);
writeFileSync(finalJson, JSON.stringify(map.toJSON()));

// 4. Thresholds per group.
let failed = vitest.status !== 0;
if (failed) console.error(`coverage: the test run itself failed (exit ${vitest.status})`);
console.log("\ngroup                                   lines     branches");
for (const [prefix, minimum] of Object.entries(THRESHOLDS)) {
  const files = map.files().filter((/** @type {string} */ file) => relative(root, file).startsWith(prefix));
  if (files.length === 0) {
    console.log(`${prefix.padEnd(40)}(no files)`);
    continue;
  }
  const summary = libCoverage.createCoverageSummary();
  for (const file of files) summary.merge(map.fileCoverageFor(file).toSummary());
  const lines = summary.lines.pct;
  const branches = summary.branches.pct;
  const ok = lines >= minimum.lines && branches >= minimum.branches;
  if (!ok) failed = true;
  console.log(
    `${prefix.padEnd(40)}${`${lines.toFixed(1)}%`.padEnd(10)}${`${branches.toFixed(1)}%`.padEnd(10)}` +
      `${ok ? "ok" : `BELOW (min ${minimum.lines}% lines, ${minimum.branches}% branches)`}`,
  );
}
process.exit(failed ? 1 : 0);
