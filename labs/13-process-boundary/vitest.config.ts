// Runs lesson 13's evidence tests against one runner folder: LAB_SUBMISSION=<dir> selects it
// (default: the reference solution). Every test imports the runner as
// "#process-boundary/src/run-process.ts".
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { labVitestConfig } from "../../grader/lab-vitest-config.ts";

export default labVitestConfig({
  labDir: dirname(fileURLToPath(import.meta.url)),
  name: "lab13",
  alias: "#process-boundary/",
  include: ["tests/**/*.test.ts"],
});
