// The test set of `npm run mutation -- --grader`: the lab's graded tests (the six evidence
// tests, every rubric probe and the homework tests, as a grade runs them by default: the
// lab's vitest config, a fixed seed, the grader's hang deadline) against the reference
// solution of the Stryker sandbox. Every surviving mutant is a defect of the reference client
// that the grader cannot see. In-process: LAB_CLIENT_HOST stays unset, so the client runs in
// the test worker, where Stryker can see what each test covers and switch mutants.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { homeworkFiles } from "./grader/grade-folders.ts";
import { labVitestConfig } from "./grader/lab-vitest-config.ts";
import { lab } from "./labs/33-mcp-lite/lab.ts";

const labDir = join(dirname(fileURLToPath(import.meta.url)), "labs", "33-mcp-lite");
// No LAB_SUBMISSION: the config's default is the solution next to it, i.e. the sandbox's mutated copy.
delete process.env.LAB_SUBMISSION;
delete process.env.LAB_CLIENT_HOST;
// The homework too: a grade runs it unless told not to, and reports its (bonus) checks.
process.env.LAB_TEST_FILES = [...lab.evidenceFiles, ...lab.probeFiles, ...homeworkFiles(labDir, lab)].join(",");
process.env.LAB_SEED ??= "1";
process.env.LAB_HANG_MS ??= "2000";
export default labVitestConfig({ labDir, name: "lab", alias: "#submission/", include: [] });
