// @ts-check
// `npm run grade -- …` starts here: the grade command (grader/cli.ts) as its prebuilt bundle
// (grader/cli-bundle.mjs), rebuilt first when a file it was built from changed; where it
// cannot be built (no esbuild, a read-only node_modules), or with LAB_GRADER_TYPESCRIPT=1 (for
// stack traces that name the grader's own files), the TypeScript itself through tsx. Either
// way the same command line, output and exit status.
import { pathToFileURL } from "node:url";
import { buildBundle, bundleIsFresh, bundlePath } from "./cli-bundle.mjs";
import { closeInheritedFds } from "./sandbox/inherited-fds.mjs";

// Descriptors this process inherited open across exec (`npm run grade … 77>>file 78<secret`,
// a pipe of whatever started npm) would reach every process it starts, the submission's
// included: closed before anything starts (grader/sandbox/inherited-fds.mjs), but for one the
// command line names (`--json /dev/fd/63`, a shell's `>(…)`), which the grade itself writes.
closeInheritedFds(process.argv.flatMap((arg) => /(?:^|=)\/(?:dev|proc\/self)\/fd\/(\d+)$/.exec(arg)?.[1] ?? []).map(Number));

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
