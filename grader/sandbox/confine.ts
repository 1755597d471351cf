// Resolution confinement in vitest's main process: a Vite plugin (added to every grade's
// config) that sees every import a submission file makes through Vite, static or dynamic,
// computed at run time or not, and lets through only files inside the submission's copy,
// Node's built-ins and the packages the lab allows. Anything else fails to resolve with
// "imports outside the submission" and is recorded here; the result reporter (same process)
// sends the records over the result channel, so a submission that catches the error still
// gets an `error` grade. Workers and the import check add the Node-level guard (guard.mjs)
// for require/createRequire and native imports.

import type { Plugin } from "vite";
import { allowedTarget, escapesCopy, forbiddenPackage, inside, isBuiltin, toPath, whereImported, type Policy } from "./policy.mjs";

export interface Violation {
  where: string;
  spec: string;
}

const KEY = Symbol.for("lab.confine.violations");
const store = globalThis as unknown as Record<symbol, Violation[] | undefined>;

export function recordViolation(v: Violation): void {
  (store[KEY] ??= []).push(v);
}

// The violations recorded so far, each returned once.
export function takeViolations(): Violation[] {
  const list = store[KEY] ?? [];
  store[KEY] = [];
  return list;
}

export function confinePlugin(policy: Policy): Plugin {
  return {
    name: "lab-confine",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (!importer || !inside(toPath(importer), policy.copy)) return null;
      if (isBuiltin(source)) return null;
      const refuse = (): never => {
        const v = { where: whereImported(policy, importer, source), spec: source.slice(0, 200) };
        recordViolation(v);
        throw new Error(`imports outside the submission: ${v.where} (${v.spec})`);
      };
      if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !source.startsWith("file:")) refuse();
      if (escapesCopy(policy, source, importer) || forbiddenPackage(policy, source)) refuse();
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (!resolved) return null;
      if (!allowedTarget(policy, resolved.id)) refuse();
      return resolved;
    },
    // Vite hands a computed dynamic import() (and one of an absolute path) straight to the
    // worker's module runner, past resolveId. Each module of the copy therefore starts by
    // replacing the runner's dynamic-import function with the checked one guard.mjs installs
    // in every worker (same line, so line numbers stay true).
    transform: {
      order: "post",
      handler(code, id) {
        const file = toPath(id);
        if (!inside(file, policy.copy) || !/\.(?:[cm]?[jt]sx?)$/.test(file)) return null;
        const prologue = `var ${DYNAMIC_IMPORT} = globalThis[Symbol.for("lab.confine.dynamicImport")](${DYNAMIC_IMPORT}, import.meta.url);`;
        const bang = code.startsWith("#!") ? code.indexOf("\n") + 1 : 0;
        return { code: code.slice(0, bang) + prologue + code.slice(bang), map: null };
      },
    },
  };
}

/** The name Vite's SSR transform gives the module runner's dynamic import function. */
const DYNAMIC_IMPORT = "__vite_ssr_dynamic_import__";
