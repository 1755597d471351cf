// StrykerJS over the reference client and the package modules that grew out of it:
// `npm run mutation` (every module, one after the other) or
// `npm run mutation -- --mutate labs/33-mcp-lite/solution/src/framing.ts`.
// Not part of `npm test`: a full run takes long. Scores are recorded in docs/architecture.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  // MUTATION_TESTS=grader (`npm run mutation -- --grader`): the lab's graded tests instead.
  vitest: { configFile: process.env.MUTATION_TESTS === "grader" ? "vitest.grader-mutation.config.ts" : "vitest.mutation.config.ts" },
  mutate: [
    "labs/33-mcp-lite/solution/src/**/*.ts",
    ...["tool-adapter", "tool-schema", "server-manager", "server-manager-options", "heartbeat"].map((m) => `packages/extensions/src/${m}.ts`),
  ],
  // Code that only runs on Windows is ignored (scripts/stryker-windows-only.mjs says what).
  plugins: ["@stryker-mutator/vitest-runner", "./scripts/stryker-windows-only.mjs"],
  ignorers: ["windows-only"],
  // No type checker: TypeScript 7 has no JavaScript API for Stryker to call, and a mutant
  // that does not compile simply fails its tests (tsx does not type-check).
  checkers: [],
  // Stryker rewrites tsconfig references through the TypeScript API; TypeScript 7 has none,
  // so it is pointed at a file that does not exist (nothing to rewrite).
  tsconfigFile: "tsconfig.stryker.json",
  coverageAnalysis: "perTest",
  concurrency: 1,
  timeoutMS: 10_000,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 90, low: 80, break: null },
  // tmp/: scratch folders other tests create and delete while a run is under way.
  ignorePatterns: ["coverage", "reports", ".grade", "bench/results", "labs/33-mcp-lite/corpus", "tmp", "scratch"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
