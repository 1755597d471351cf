// Runs the lab's evidence tests (and the rubric probes) against one client folder:
// LAB_SUBMISSION=<dir> selects it (default: the reference solution, or the starter in the
// learner repository, which has no solution). Every test imports
// the client as "#submission/src/mcp-client.ts", so there is one copy of each test.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const labDir = dirname(fileURLToPath(import.meta.url));
const fallback = existsSync(join(labDir, "solution")) ? "solution" : "starter";
const submission = resolve(process.env.LAB_SUBMISSION ?? join(labDir, fallback));

export default defineConfig({
  root: labDir,
  resolve: { alias: [{ find: /^#submission\//, replacement: `${submission}/` }] },
  test: {
    name: "lab",
    // The grader and scripts/lab-test.ts pick files explicitly; by default, everything.
    include: (process.env.LAB_TEST_FILES ?? "tests/**/*.test.ts,probes/**/*.test.ts,homework/**/*.test.ts").split(","),
    setupFiles: [join(labDir, "tests", "setup.ts")],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    env: { LAB_SUBMISSION_DIR: submission },
  },
});
