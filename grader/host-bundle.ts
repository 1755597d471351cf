// The client host's two files, built once per grade on the trusted side before anything of
// the submission runs: the lab's host harness (labs/<lab>/host/host-main.ts with what it
// imports) and the submission's entry module with every file of the copy it imports, each one
// ES module with an inline source map. A host then starts as plain `node` (about 50 ms)
// instead of compiling TypeScript through tsx in every host (about 200 ms of CPU each).
// Bundling runs no submission code. Only files inside the copy are bundled: every other
// import stays a run-time import, with a relative one turned absolute so that it still names
// the place it named, where the host's strict resolution guard refuses it as it always did.

import { existsSync, mkdirSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import { build, type Plugin } from "esbuild";

/** Where the bundles go: inside the copy, so that the strict guard counts them as the copy's. */
export const HOST_BUNDLE_DIR = ".lab-host";

export interface HostBundle {
  harness: string;
  submission: string;
}

// Where the bundles of a grade go, known before they are built (the test run starts while
// they are built: its gate waits for them); undefined when the lab has no host.
export function plannedHostBundle(labDir: string, copy: string): HostBundle | undefined {
  if (!existsSync(join(labDir, "host", "host-main.ts"))) return undefined;
  const out = join(copy, HOST_BUNDLE_DIR);
  return { harness: join(out, "harness.mjs"), submission: join(out, "submission.mjs") };
}

// Bundles the host harness and the submission; undefined when the lab has no host or a
// bundle cannot be built (a syntax error: the type check reports it, and the hosts then
// load the submission through tsx and fail as the import would).
export async function buildHostBundle(labDir: string, copy: string, entry: string): Promise<HostBundle | undefined> {
  const bundle = plannedHostBundle(labDir, copy);
  if (!bundle) return undefined;
  const hostMain = join(labDir, "host", "host-main.ts");
  const out = join(copy, HOST_BUNDLE_DIR);
  try {
    mkdirSync(out, { recursive: true });
    const common = { bundle: true, format: "esm" as const, platform: "node" as const, target: "node20", sourcemap: "inline" as const, sourcesContent: false, logLevel: "silent" as const, write: true };
    // (esbuild runs plugins only in its asynchronous API.)
    await Promise.all([
      build({ ...common, entryPoints: [hostMain], outfile: bundle.harness, packages: "external", plugins: [keepGuardExternal()] }),
      build({ ...common, entryPoints: [join(copy, entry)], outfile: bundle.submission, plugins: [onlyInside(copy)] }),
    ]);
    return bundle;
  } catch {
    return undefined;
  }
}

// The harness imports the resolution guard by a path relative to its own file: keep that an
// absolute run-time import of the project's guard.
function keepGuardExternal(): Plugin {
  return {
    name: "lab-host-guard",
    setup(build) {
      build.onResolve({ filter: /sandbox\/guard\.mjs$/ }, (args) => ({ path: resolve(args.resolveDir, args.path), external: true }));
    },
  };
}

// Bundles what resolves inside the copy; leaves everything else to run time.
function onlyInside(copy: string): Plugin {
  const root = `${resolve(copy)}/`;
  return {
    name: "lab-host-confine",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        if (/^(\.{1,2}\/|\/)/.test(args.path)) {
          const target = resolve(args.resolveDir || dirname(args.importer), args.path);
          return target.startsWith(root) ? undefined : { path: target, external: true };
        }
        return { path: args.path, external: true };
      });
    },
  };
}
