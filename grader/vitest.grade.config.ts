// The vitest config of every grading run: the lab's own config ($LAB_VITEST_CONFIG, loaded
// as vitest would load it) merged with the grader's overrides (vitest-overrides.ts). A fixed
// file inside the project, so nothing is generated per grade and the project can be read-only.
import { pathToFileURL } from "node:url";
import { mergeConfig } from "vitest/config";
import { gradeOverrides } from "./vitest-overrides.ts";

const labConfigFile = process.env.LAB_VITEST_CONFIG;
if (!labConfigFile) throw new Error("LAB_VITEST_CONFIG is not set (the grader sets it)");
const base = (await import(/* @vite-ignore */ pathToFileURL(labConfigFile).href)).default;
export default mergeConfig(base, gradeOverrides());
