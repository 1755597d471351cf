// Runs lesson 13's evidence tests against one runner folder: LAB_SUBMISSION=<dir> selects it
// (default: the reference solution). Every test imports the runner as
// "#process-boundary/src/run-process.ts", so there is one copy of each test.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const labDir = dirname(fileURLToPath(import.meta.url));
const submission = resolve(process.env.LAB_SUBMISSION ?? join(labDir, "solution"));

export default defineConfig({
  root: labDir,
  resolve: { alias: [{ find: /^#process-boundary\//, replacement: `${submission}/` }] },
  test: {
    name: "lab13",
    include: (process.env.LAB_TEST_FILES ?? "tests/**/*.test.ts").split(","),
    setupFiles: [join(labDir, "tests", "setup.ts")],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    env: { LAB_SUBMISSION_DIR: submission },
  },
});
