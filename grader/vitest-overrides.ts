// What a grading run adds to the lab's own vitest config (which it never replaces): the
// grader's setup file, one worker process per test file, a safety-net test timeout and a
// private cache dir. The grader writes a small config per grade that merges the two, so
// vitest bundles both files the usual way.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ViteUserConfig } from "vitest/config";

const here = dirname(fileURLToPath(import.meta.url));

/** Default safety net behind the harness's own hang detectors, in ms. */
export const DEFAULT_TEST_TIMEOUT_MS = 15_000;

export function gradeOverrides(env: NodeJS.ProcessEnv = process.env): ViteUserConfig {
  const testTimeoutMs = Number(env.LAB_TEST_TIMEOUT_MS ?? DEFAULT_TEST_TIMEOUT_MS);
  return {
    cacheDir: env.LAB_GRADE_CACHE_DIR ?? join(here, "..", "node_modules", ".vite-grade"),
    test: {
      setupFiles: [join(here, "child", "setup.ts")],
      pool: "forks",
      fileParallelism: true,
      maxWorkers: Number(env.LAB_MAX_WORKERS ?? 6),
      testTimeout: testTimeoutMs,
      hookTimeout: testTimeoutMs,
      teardownTimeout: 5_000,
      allowOnly: false,
      passWithNoTests: false,
      watch: false,
    },
  };
}

// The source of the per-grade config file that merges the lab's config with these overrides.
export function gradeConfigSource(labConfigFile: string): string {
  return [
    `import { mergeConfig } from "vitest/config";`,
    `import base from ${JSON.stringify(labConfigFile)};`,
    `import { gradeOverrides } from ${JSON.stringify(join(here, "vitest-overrides.ts"))};`,
    `export default mergeConfig(base, gradeOverrides());`,
    ``,
  ].join("\n");
}
