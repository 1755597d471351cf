// The project's whole suite: the lab's evidence tests (and probes) against the reference
// solution, the @coding-agent/extensions package's tests, plus the project's own tests under tests/. `npm test` type-checks first.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** A pattern anchored at this project's folder. */
const fromRoot = (pattern: string) => fileURLToPath(new URL(`./${pattern}`, import.meta.url));

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
      // Absolute patterns: vitest matches these against the whole path, so "fixtures/*.ts"
      // would also take tests/fixtures/*.ts, and "tests/**" would drop everything of a
      // checkout that lives in a folder named tests.
      include: ["labs/33-mcp-lite/solution/src/**/*.ts", "packages/extensions/src/**/*.ts", "grader/**/*.{ts,mjs}", "fixtures/*.{ts,mjs}"].map(fromRoot),
      // Not measured in-process: grader/child/* runs inside the vitest child each grade spawns,
      // grader/bench.ts and fixtures/measure-startup.mjs are benchmarks, platforms are CI files,
      // fixtures/mcp-server-coverage.mjs is the collector itself.
      // Likewise the sandbox's inside (ns-init, its root and the host launcher, the guard and its hooks, the confinement
      // plugin and its policy, the grade config): they run only in the processes a grade starts.
      exclude: [
        "**/*.test.ts",
        ...[
          "tests/**",
          "grader/platforms/**",
          "grader/child/**",
          "grader/bench.ts",
          "fixtures/measure-startup.mjs",
          "fixtures/mcp-server-coverage.mjs",
          "grader/sandbox/{ns-init,ns-root,host-launcher,guard,guard-hooks,policy}.mjs",
          "grader/sandbox/confine.ts",
          "grader/vitest.grade.config.ts",
          "grader/vitest-overrides.ts",
        ].map(fromRoot),
      ],
      // `npm run coverage` (scripts/coverage.mjs) adds the fixture server's child-process
      // coverage and enforces the thresholds per group.
      reporter: ["text-summary", "json"],
      reportOnFailure: true,
    },
  },
});
