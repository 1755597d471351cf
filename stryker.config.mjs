// StrykerJS over the reference client and the package modules that grew out of it:
// `npm run mutation` (every module, one after the other) or
// `npm run mutation -- --mutate labs/33-mcp-lite/solution/src/framing.ts`.
// Not part of `npm test`: a full run takes long. Scores are recorded in docs/architecture.md.
const grader = process.env.MUTATION_TESTS === "grader";
// The grader's hang deadline (LAB_HANG_MS of vitest.grader-mutation.config.ts): every wait of
// a graded test gives up after it, so a mutant that makes the client hang fails its test
// then; Stryker's own timeout has to catch what blocks the thread (a busy loop).
const HANG_MS = Number(process.env.LAB_HANG_MS ?? 2_000);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  // MUTATION_TESTS=grader (`npm run mutation -- --grader`): the lab's graded tests instead.
  // Graded tests: the files to run come from the per-test coverage below, not from vitest's
  // "related" filter (the graded files reach the solution only through the lab's alias).
  vitest: grader ? { configFile: "vitest.grader-mutation.config.ts", related: false } : { configFile: "vitest.mutation.config.ts" },
  mutate: [
    "labs/33-mcp-lite/solution/src/**/*.ts",
    ...["tool-adapter", "tool-schema", "server-manager", "server-manager-options", "heartbeat", "failure-record"].map((m) => `packages/extensions/src/${m}.ts`),
  ],
  // Code that only runs on Windows is ignored (scripts/stryker-windows-only.mjs says what).
  // With the graded tests, what CONTRACT §1 leaves open is ignored too: error message texts
  // and the extra context of an error (scripts/stryker-outside-contract.mjs says exactly what).
  plugins: ["@stryker-mutator/vitest-runner", "./scripts/stryker-windows-only.mjs", "./scripts/stryker-outside-contract.mjs"],
  ignorers: grader ? ["windows-only", "outside-contract"] : ["windows-only"],
  // No type checker: TypeScript 7 has no JavaScript API for Stryker to call, and a mutant
  // that does not compile simply fails its tests (tsx does not type-check).
  checkers: [],
  // Stryker rewrites tsconfig references through the TypeScript API; TypeScript 7 has none,
  // so it is pointed at a file that does not exist (nothing to rewrite).
  tsconfigFile: "tsconfig.stryker.json",
  // perTest, also for the graded tests: each mutant runs the tests that executed its code in
  // the dry run, and stops at the first that fails (Stryker's bail, on by default). "off" would
  // change nothing with the vitest runner: it reports per-test coverage from its dry run
  // whatever this option says, and Stryker plans with it (checked 2026-12-01: a mutant of the
  // unsupported-version error ran exactly the two graded tests that send that version). The
  // attribution is sound here: tests run one at a time, code run between tests counts as
  // "static" (all tests run), and no covered test id went missing from the dry run's results.
  coverageAnalysis: "perTest",
  concurrency: 1,
  // Added to the covering tests' dry-run time × timeoutFactor. Generous for the graded tests
  // too: a mutant that only makes the client hang fails its test at the hang deadline anyway,
  // while a tight margin on a loaded machine turns slow survivors into false "timeouts"
  // (`start <= chunk.length` in framing.ts, equivalent, timed out at 4 s under load 30+).
  timeoutMS: grader ? 5 * HANG_MS : 10_000,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 90, low: 80, break: null },
  // tmp/: scratch folders other tests create and delete while a run is under way.
  ignorePatterns: ["coverage", "reports", ".grade", "bench/results", "labs/33-mcp-lite/corpus", "tmp", "scratch"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
