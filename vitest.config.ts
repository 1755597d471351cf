// The project's whole suite: the lab's evidence tests (and probes) against the reference
// solution, the @coding-agent/extensions package's tests, plus the project's own tests under tests/. `npm test` type-checks first.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      "labs/33-mcp-lite/vitest.config.ts",
      "packages/extensions/vitest.config.ts",
      "labs/13-process-boundary/vitest.config.ts",
      {
        test: {
          name: "project",
          include: ["tests/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          allowOnly: false,
          // Timers from the reference solution count as the client's (tests/support.ts).
          env: { LAB_SUBMISSION_DIR: fileURLToPath(new URL("./labs/33-mcp-lite/solution", import.meta.url)) },
        },
      },
    ],
    coverage: {
      provider: "v8",
      include: ["labs/33-mcp-lite/solution/src/**/*.ts", "packages/extensions/src/**/*.ts", "grader/**/*.{ts,mjs}", "fixtures/*.{ts,mjs}"],
      // Not measured in-process: grader/child/* runs inside the vitest child each grade spawns,
      // grader/bench.ts and fixtures/measure-startup.mjs are benchmarks, platforms are CI files,
      // fixtures/mcp-server-coverage.mjs is the collector itself.
      // Likewise the sandbox's inside (ns-init, the guard and its hooks, the confinement
      // plugin and its policy, the grade config): they run only in the processes a grade starts.
      exclude: [
        // (No "tests/**": nothing under tests/ is in `include`, and vitest matched that pattern
        // against the whole path, so a checkout inside a folder named tests measured nothing.)
        "**/*.test.ts",
        "grader/platforms/**",
        "grader/child/**",
        "grader/bench.ts",
        "fixtures/measure-startup.mjs",
        "fixtures/mcp-server-coverage.mjs",
        "grader/sandbox/{ns-init,guard,guard-hooks,policy}.mjs",
        "grader/sandbox/confine.ts",
        "grader/vitest.grade.config.ts",
        "grader/vitest-overrides.ts",
      ],
      // `npm run coverage` (scripts/coverage.mjs) adds the fixture server's child-process
      // coverage and enforces the thresholds per group.
      reporter: ["text-summary", "json"],
      reportOnFailure: true,
    },
  },
});
