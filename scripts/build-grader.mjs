// @ts-check
// node scripts/build-grader.mjs (run by `npm ci`): prebuilds the grade command
// (grader/cli-bundle.mjs) and each hosted lab's test-side harness (grader/harness-mirror.mjs).
// Never fails the install: a grade then builds them on first use, or runs the TypeScript
// through tsx (and the harness through vitest) where it cannot.
import { readdirSync } from "node:fs";
import { buildBundle } from "../grader/cli-bundle.mjs";
import { buildMirror } from "../grader/harness-mirror.mjs";

try {
  const built = await buildBundle();
  process.stderr.write(`build-grader: built ${built.bundle} (${built.inputs} files, labs ${built.labs.join(", ")})\n`);
} catch (error) {
  process.stderr.write(`build-grader: not built (${/** @type {Error} */ (error)?.message ?? error}); npm run grade builds it on first use, or runs grader/cli.ts through tsx\n`);
}

for (const lab of readdirSync(new URL("../labs/", import.meta.url), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)) {
  try {
    const mirror = await buildMirror(lab);
    if (mirror) process.stderr.write(`build-grader: built ${mirror.dir} (${mirror.modules} modules)\n`);
  } catch (error) {
    process.stderr.write(`build-grader: no harness mirror for ${lab} (${/** @type {Error} */ (error)?.message ?? error}); a grade builds it on first use, or compiles the harness through vitest\n`);
  }
}
