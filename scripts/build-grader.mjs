// @ts-check
// node scripts/build-grader.mjs (run by `npm ci`): prebuilds the grade command
// (grader/cli-bundle.mjs). Never fails the install: a grade then builds it on first use, or
// runs the TypeScript through tsx where it cannot.
import { buildBundle } from "../grader/cli-bundle.mjs";

try {
  const built = await buildBundle();
  process.stderr.write(`build-grader: built ${built.bundle} (${built.inputs} files, labs ${built.labs.join(", ")})\n`);
} catch (error) {
  process.stderr.write(`build-grader: not built (${/** @type {Error} */ (error)?.message ?? error}); npm run grade builds it on first use, or runs grader/cli.ts through tsx\n`);
}
