// The vitest config every lab's own vitest.config.ts is made of: the tests import the code
// under test through one alias ("#submission/..."), which points at the folder named by
// LAB_SUBMISSION (default: the lab's reference solution, or its starter where there is no
// solution, as in the learner repository), so there is one copy of each test. The grader
// and scripts/lab-test.ts pick the test files with LAB_TEST_FILES.

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineConfig, type ViteUserConfig } from "vitest/config";

export interface LabConfigOptions {
  /** The lab's folder. */
  labDir: string;
  /** vitest's project name. */
  name: string;
  /** The import prefix the tests use for the code under test, e.g. "#submission/". */
  alias: string;
  /** Test file globs when LAB_TEST_FILES names none. */
  include: string[];
}

/** Per-test and per-hook timeout of the lab tests, in ms (they bound their own waits). */
export const LAB_TEST_TIMEOUT_MS = 20_000;

export function labVitestConfig(options: LabConfigOptions): ViteUserConfig {
  const { labDir } = options;
  const fallback = existsSync(join(labDir, "solution")) ? "solution" : "starter";
  const submission = resolve(process.env.LAB_SUBMISSION ?? join(labDir, fallback));
  const escaped = options.alias.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return defineConfig({
    root: labDir,
    resolve: { alias: [...hostAlias(labDir, options.alias), { find: new RegExp(`^${escaped}`), replacement: `${submission}/` }] },
    test: {
      name: options.name,
      include: (process.env.LAB_TEST_FILES ?? options.include.join(",")).split(","),
      setupFiles: [join(labDir, "tests", "setup.ts")],
      testTimeout: LAB_TEST_TIMEOUT_MS,
      hookTimeout: LAB_TEST_TIMEOUT_MS,
      allowOnly: false,
      env: { LAB_SUBMISSION_DIR: submission, ...(process.env.LAB_CLIENT_HOST === "1" ? { LAB_CLIENT_HOST: "1" } : {}) },
    },
  });
}

// With LAB_CLIENT_HOST=1 (every grade) a lab that has a client proxy (host/proxy.ts) gets it
// in place of the submission's entry module: the tests drive the submission's client in a
// host process of its own, and no submission code loads in a test worker.
function hostAlias(labDir: string, alias: string) {
  const proxy = join(labDir, "host", "proxy.ts");
  if (process.env.LAB_CLIENT_HOST !== "1" || !existsSync(proxy)) return [];
  const escaped = alias.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return [{ find: new RegExp(`^${escaped}src/mcp-client\\.ts$`), replacement: proxy }];
}
