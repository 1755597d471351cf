// @ts-check
// `npm run grade -- …` starts here: the grade command (grader/cli.ts) as its prebuilt bundle
// (grader/cli-bundle.mjs), rebuilt first when a file it was built from changed; where it
// cannot be built (no esbuild, a read-only node_modules), or with LAB_GRADER_TYPESCRIPT=1 (for
// stack traces that name the grader's own files), the TypeScript itself through tsx. Either
// way the same command line, output and exit status.
import { pathToFileURL } from "node:url";
import { buildBundle, bundleIsFresh, bundlePath } from "./cli-bundle.mjs";

const typescript = process.env.LAB_GRADER_TYPESCRIPT === "1";
let fresh = !typescript && bundleIsFresh();
if (!fresh && !typescript) {
  try {
    await buildBundle();
    fresh = bundleIsFresh();
  } catch {
    fresh = false;
  }
}
if (fresh) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundlePath()).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./cli.ts");
}
