// @ts-check
// Where a submission's code may import from (shared by the Vite plugin in vitest's main
// process, confine.ts, and the Node-level guard in every process that loads the
// submission, guard.mjs): files inside its own copy, Node's built-in modules, and the
// packages its lab's manifest allows (none for lab 33). The policy arrives in $LAB_CONFINE
// as JSON: { copy, allow: [package names], root, hide: [paths] }.
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** @typedef {{ copy: string, allow: string[], root: string, hide: string[] }} Policy */

/** @returns {Policy | undefined} */
export function policyFromEnv(env = process.env) {
  if (!env.LAB_CONFINE) return undefined;
  return JSON.parse(env.LAB_CONFINE);
}

const builtins = new Set(builtinModules);
/** @param {string} spec */
export function isBuiltin(spec) {
  return spec.startsWith("node:") || builtins.has(spec) || builtins.has(spec.split("/")[0] ?? "");
}

/** A file path from a path, a file: URL or a Vite id (query and \0 prefixes dropped). @param {string} id */
export function toPath(id) {
  let path = id.replace(/^\0/, "").replace(/[?#].*$/, "");
  if (path.startsWith("file:")) {
    try {
      path = fileURLToPath(path);
    } catch {
      // not a file URL after all
    }
  }
  if (path.startsWith("/@fs/")) path = path.slice(4);
  return path;
}

/** @param {string} path @param {string} dir */
export function inside(path, dir) {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

// May code inside the submission import `resolved` (a path or URL)?
/** @param {Policy} policy @param {string} resolved */
export function allowedTarget(policy, resolved) {
  if (isBuiltin(resolved)) return true;
  const path = toPath(resolved);
  if (inside(path, policy.copy)) return true;
  return policy.allow.some((name) => path.includes(`/node_modules/${name}/`));
}

// A path or file: specifier that names a place outside the copy before any resolution
// (relative, absolute or file:): refused even when nothing is there (the solution is hidden).
/** @param {Policy} policy @param {string} spec @param {string} importer */
export function escapesCopy(policy, spec, importer) {
  if (!/^(\.{1,2}\/|\/|file:)/.test(spec)) return false;
  let target;
  try {
    target = toPath(new URL(spec, importer.startsWith("file:") ? importer : pathToFileURL(toPath(importer)).href).href);
  } catch {
    return false;
  }
  return !inside(target, policy.copy);
}

// A bare package specifier (not a path, URL or built-in) that the lab does not allow.
/** @param {Policy} policy @param {string} spec */
export function forbiddenPackage(policy, spec) {
  if (/^(\.{1,2}\/|\/|[a-z][a-z0-9+.-]*:)/i.test(spec) || isBuiltin(spec) || spec.startsWith("\0")) return false;
  const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0];
  return !policy.allow.includes(name ?? "");
}

// Where the import is written: "src/x.ts:3" (the first line naming the specifier), or the file alone.
/** @param {Policy} policy @param {string | undefined} importer @param {string} spec */
export function whereImported(policy, importer, spec) {
  if (!importer) return "?";
  const file = toPath(importer);
  const rel = inside(file, policy.copy) ? file.slice(policy.copy.length + 1) : file;
  try {
    const lines = readFileSync(file, "utf8").split("\n");
    const needle = spec.length > 200 ? spec.slice(0, 200) : spec;
    const index = lines.findIndex((line) => line.includes(needle));
    if (index !== -1) return `${rel}:${index + 1}`;
  } catch {
    // unreadable: the file alone
  }
  return rel;
}

// Tooling the tests run on, never importable by a submission even indirectly.
export const TOOLING = ["vitest", "@vitest", "vite", "tsx", "esbuild", "rolldown", "typescript", "@rolldown", "@oxc-project"];
