// @ts-check
// Node-level resolution guard, installed before the submission loads in every process that
// loads it (vitest's workers through `--import`, the import check explicitly). Two parts:
// - CommonJS: Module._resolveFilename is wrapped (and made read-only), which covers
//   require, createRequire(any path), process.getBuiltinModule("module") and tsx's CJS API.
//   A require made with submission code on the stack must resolve inside the copy (or to a
//   built-in or an allowed package); one without (a callback scheduled from elsewhere) may
//   load ordinary packages but never the test tooling (vitest, vite, tsx, ...), nor a file
//   outside node_modules. In strict mode (the import check) every resolution must stay in
//   the copy.
// - ESM, in the import check (strict): a module.register resolve hook (guard-hooks.mjs)
//   refuses data: URLs and every target outside the copy. In the test workers, a checked
//   replacement for Vite's dynamic import (installed below, used by confine.ts).
// A refusal throws "imports outside the submission: <file:line> (<specifier>)" and appends
// a line to $LAB_VIOLATION_LOG, so the grade is an error even when the submission catches it.
import { appendFileSync, realpathSync } from "node:fs";
import Module, { createRequire, register, syncBuiltinESMExports } from "node:module";
import { allowedTarget, escapesCopy, forbiddenPackage, inside, isBuiltin, policyFromEnv, TOOLING, toPath, whereImported } from "./policy.mjs";

const policy = policyFromEnv();
const strict = process.env.LAB_CONFINE_STRICT === "1";
const log = process.env.LAB_VIOLATION_LOG;

/** @param {string | undefined} importer @param {string} spec */
function refuse(importer, spec) {
  if (!policy) throw new Error("unreachable");
  const where = whereImported(policy, importer, spec);
  try {
    if (log) appendFileSync(log, `${JSON.stringify({ where, spec: spec.slice(0, 200) })}\n`);
  } catch {
    // The log is best effort; the refusal is what protects.
  }
  return new Error(`imports outside the submission: ${where} (${spec.slice(0, 200)})`);
}

// The first submission file on the current stack, "" when none, undefined when the stack
// cannot be read (Error.prepareStackTrace locked by someone): treated as the submission.
function submissionFrame() {
  if (!policy) return "";
  const ErrorCtor = /** @type {any} */ (Error);
  const savedPrepare = ErrorCtor.prepareStackTrace;
  const savedLimit = ErrorCtor.stackTraceLimit;
  try {
    ErrorCtor.prepareStackTrace = (/** @type {unknown} */ _e, /** @type {any[]} */ sites) => sites;
    ErrorCtor.stackTraceLimit = 200;
    if (ErrorCtor.prepareStackTrace === savedPrepare && savedPrepare !== undefined) return undefined;
    const holder = {};
    Error.captureStackTrace(holder);
    const sites = /** @type {any} */ (holder).stack;
    if (!Array.isArray(sites)) return undefined;
    for (const site of sites) {
      const file = typeof site?.getFileName === "function" ? site.getFileName() : undefined;
      if (file && inside(toPath(String(file)), policy.copy)) return toPath(String(file));
    }
    return "";
  } catch {
    return undefined;
  } finally {
    try {
      ErrorCtor.prepareStackTrace = savedPrepare;
      ErrorCtor.stackTraceLimit = savedLimit;
    } catch {
      // locked
    }
  }
}

if (policy) {
  // The project's packages, by their own path and by their real path (a copied workbook may
  // share its node_modules through a symlink; resolved files carry the real path).
  const modulesDirs = [`${policy.root}/node_modules`];
  try {
    modulesDirs.push(realpathSync(modulesDirs[0] ?? ""));
  } catch {
    // no node_modules: nothing loads anyway
  }
  const M = /** @type {any} */ (Module);
  const original = M._resolveFilename;
  /** @this {any} @param {string} request @param {any} parent @param {boolean} isMain @param {any} options */
  const guarded = function (request, parent, isMain, options) {
    if (typeof request === "string" && isBuiltin(request)) return original.call(this, request, parent, isMain, options);
    const frame = submissionFrame();
    const fromSubmission = strict || frame !== "";
    const where = frame || parent?.filename;
    if (fromSubmission && typeof request === "string") {
      // Refused before resolution: the target may be hidden, or unreachable from the copy.
      const base = parent?.filename ?? policy.copy + "/";
      if (escapesCopy(policy, request, base) || forbiddenPackage(policy, request)) throw refuse(where, request);
    }
    const filename = original.call(this, request, parent, isMain, options);
    if (isBuiltin(filename)) return filename;
    if (fromSubmission) {
      if (!allowedTarget(policy, filename)) throw refuse(where, request);
      return filename;
    }
    // No submission code on the stack: ordinary packages only, never the tooling.
    const path = toPath(filename);
    const inModules = modulesDirs.some((dir) => inside(path, dir));
    if (!inModules || TOOLING.some((name) => path.includes(`/node_modules/${name}/`)) || policy.hide.some((h) => inside(path, h))) {
      throw refuse(parent?.filename, request);
    }
    return filename;
  };
  Object.defineProperty(M, "_resolveFilename", { value: guarded, writable: false, configurable: false });
  // The checked dynamic import that every module of the copy installs over the module
  // runner's own (see confine.ts): a computed import() must stay inside the copy too.
  /** @param {(dep: unknown, options?: unknown) => Promise<unknown>} original @param {string} moduleUrl */
  const dynamicImport = (original, moduleUrl) => {
    const base = toPath(String(moduleUrl));
    return (/** @type {unknown} */ dep, /** @type {unknown} */ options) => {
      const spec = String(dep);
      if (!isBuiltin(spec)) {
        const scheme = /^[a-z][a-z0-9+.-]*:/i.test(spec) && !spec.startsWith("file:");
        if (scheme || escapesCopy(policy, spec, base) || forbiddenPackage(policy, spec)) return Promise.reject(refuse(base, spec));
      }
      return original(dep, options);
    };
  };
  Object.defineProperty(globalThis, Symbol.for("lab.confine.dynamicImport"), { value: dynamicImport, writable: false, configurable: false });
  // Native ESM resolution needs a hook only where the submission is loaded natively (the
  // import check). In the test workers Vite loads it: its imports go through the plugin and
  // the checked dynamic import above, and eval/Function import() fails in vitest's VM
  // context; a hook there would cost a loader thread per worker for nothing.
  if (strict) register(new URL("./guard-hooks.mjs", import.meta.url), { data: { policy, strict, log } });
  // A worker thread loads its own modules on a loader of its own, which the hooks above never
  // see (Node 20 does not give a thread the hooks its parent registered): where the submission
  // runs natively, no worker threads. Replaced in the module's exports before the submission
  // can import it, so require, getBuiltinModule and an ESM import all find the refusal.
  if (strict) refuseWorkerThreads();
}

// worker_threads.Worker as a constructor that refuses, and records the refusal like an import.
function refuseWorkerThreads() {
  const threads = createRequire(import.meta.url)("node:worker_threads");
  const Refused = function Worker(/** @type {unknown} */ entry) {
    const spec = entry instanceof URL ? entry.href : String(entry).slice(0, 200);
    const error = refuse(submissionFrame() || undefined, spec);
    error.message = `${error.message}: worker threads are not available to the client in a grade`;
    throw error;
  };
  Object.defineProperty(threads, "Worker", { value: Refused, writable: false, configurable: false, enumerable: true });
  syncBuiltinESMExports();
}
