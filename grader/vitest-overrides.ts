// What a grading run adds to the lab's own vitest config (which it never replaces): the
// grader's setup file, one worker process per test file, a safety-net test timeout, a
// private cache dir, the import-confinement plugin for the submission (sandbox/confine.ts)
// and, in every worker, the Node-level guard (sandbox/guard.mjs) and a heap cap. The config
// vitest loads is the fixed file grader/vitest.grade.config.ts, which merges the two; it
// learns the lab and the submission from the environment, so no file is written per grade.

import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";
import type { ViteUserConfig } from "vitest/config";
import { mirroredPath, MIRROR_INPUTS } from "./harness-mirror.mjs";
import { hostedRun } from "./hosted-run.ts";
import { RunFirstSequencer } from "./run-first.ts";
import { confinePlugin } from "./sandbox/confine.ts";
import { policyFromEnv } from "./sandbox/policy.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** Default safety net behind the harness's own hang detectors, in ms. */
export const DEFAULT_TEST_TIMEOUT_MS = 15_000;

/** Test workers of a grade: the tests mostly wait on pipes and the fixture, so one more than the cores. */
export const DEFAULT_WORKERS = Math.max(2, availableParallelism() + 1);

/** Heap cap of each test worker, in MiB: a submission that exhausts memory fails fast, named. */
export const WORKER_HEAP_MB = 512;

export function gradeOverrides(env: NodeJS.ProcessEnv = process.env): ViteUserConfig {
  const testTimeoutMs = Number(env.LAB_TEST_TIMEOUT_MS ?? DEFAULT_TEST_TIMEOUT_MS);
  const policy = policyFromEnv(env);
  // A lab whose client runs in a host process of its own (labs/<lab>/host/) never loads the
  // submission in a worker: the workers need no resolution guard (the host has its own).
  const hosted = hostedRun(env);
  return {
    cacheDir: env.LAB_GRADE_CACHE_DIR ?? join(here, "..", "node_modules", ".vite-grade"),
    plugins: [...(policy ? [confinePlugin(policy)] : []), ...harnessMirror(env, hosted)],
    test: {
      execArgv: [`--max-old-space-size=${WORKER_HEAP_MB}`, ...(policy && !hosted ? ["--import", join(here, "sandbox", "guard.mjs")] : []), ...earlyBridge(env, hosted)],
      setupFiles: [join(here, "child", "setup.ts")],
      globalSetup: policy ? [join(here, "child", "gate.ts")] : [],
      pool: "forks",
      // Test files share a few long-lived workers instead of a fresh process each: on two
      // cores that halves a grade's CPU time (docs/performance.md). What the tests count
      // (timers, listeners, processes) is counted per test against a snapshot, so a file
      // that runs after another in the same worker is judged on what it did itself.
      isolate: false,
      fileParallelism: true,
      maxWorkers: Number(env.LAB_MAX_WORKERS ?? DEFAULT_WORKERS),
      // The lab's long files first (the manifest's runFirst), so none ends the run alone.
      sequence: { sequencer: RunFirstSequencer },
      testTimeout: testTimeoutMs,
      hookTimeout: testTimeoutMs,
      teardownTimeout: 5_000,
      allowOnly: false,
      passWithNoTests: false,
      watch: false,
      // The tests (and the submission) use the temp dir the grader chose for them; vitest's
      // own main process keeps its temp files elsewhere (its TMPDIR), so a submission that
      // fills its size-capped /tmp cannot break the run that grades it.
      env: env.LAB_WORKER_TMPDIR ? { TMPDIR: env.LAB_WORKER_TMPDIR } : {},
    },
  };
}

// A hosted lab's workers start their bridge thread to the client host as they start
// (labs/<lab>/host/early-bridge.mjs, where the lab has one): it boots while vitest's runtime
// loads the test files, and starts no host before the gate opens.
function earlyBridge(env: NodeJS.ProcessEnv, hosted: boolean): string[] {
  if (!hosted || !env.LAB_VITEST_CONFIG) return [];
  const early = join(dirname(env.LAB_VITEST_CONFIG), "host", "early-bridge.mjs");
  return existsSync(early) ? ["--import", early] : [];
}

// A hosted grade's harness modules from their precompiled mirror (grader/harness-mirror.mjs,
// $LAB_HARNESS_MIRROR, set by the grader only when the mirror is fresh and safely owned): an
// import that resolves to a mirrored source loads the mirror's module instead, which vitest
// leaves to Node (it is under node_modules), so vitest's main process compiles and ships only
// the test files and setup files. The sources a mirror holds are those its inputs record.
function harnessMirror(env: NodeJS.ProcessEnv, hosted: boolean): Plugin[] {
  const dir = env.LAB_HARNESS_MIRROR;
  if (!dir || !hosted) return [];
  let sources: Set<string>;
  try {
    const root = join(here, "..");
    sources = new Set(Object.keys((JSON.parse(readFileSync(join(dir, MIRROR_INPUTS), "utf8")) as { sources: Record<string, unknown> }).sources).map((file) => join(root, file)));
  } catch {
    return [];
  }
  return [
    {
      name: "lab-harness-mirror",
      enforce: "pre",
      async resolveId(source, importer, options) {
        if (!importer) return null;
        const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
        if (!resolved || resolved.external) return null;
        const file = resolved.id.split("?")[0]!;
        return sources.has(file) ? mirroredPath(dir, file) : null;
      },
    },
  ];
}
