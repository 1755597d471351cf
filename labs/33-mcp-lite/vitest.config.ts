// Runs the lab's evidence tests (and the rubric probes and homework) against one client
// folder: LAB_SUBMISSION=<dir> selects it (default: the reference solution, or the starter
// in the learner repository). Every test imports the client as "#submission/src/mcp-client.ts".
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { labVitestConfig } from "../../grader/lab-vitest-config.ts";

export default labVitestConfig({
  labDir: dirname(fileURLToPath(import.meta.url)),
  name: "lab",
  alias: "#submission/",
  include: ["tests/**/*.test.ts", "probes/**/*.test.ts", "homework/**/*.test.ts"],
});
