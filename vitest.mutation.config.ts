// The test set of `npm run mutation` (StrykerJS, stryker.config.mjs): the project's unit
// tests of the reference client, its client tests and its hardening tests, no lab
// evidence, grader or lesson tests (those grade whole submissions and would make every
// mutant cost minutes). MUTATION_TESTS=unit narrows it to tests/unit for the pure modules.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const sets: Record<string, string[]> = {
  unit: ["tests/unit/**/*.test.ts"],
  all: ["tests/unit/**/*.test.ts", "tests/client/**/*.test.ts", "tests/hardening/**/*.test.ts"],
};

export default defineConfig({
  test: {
    include: sets[process.env.MUTATION_TESTS ?? "all"] ?? sets.all!,
    // Grades the starter and the solution in child processes: too slow to run per mutant.
    exclude: ["tests/hardening/homework.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { LAB_SUBMISSION_DIR: fileURLToPath(new URL("./labs/33-mcp-lite/solution", import.meta.url)) },
  },
});
