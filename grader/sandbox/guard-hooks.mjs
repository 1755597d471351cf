// @ts-check
// The ESM half of guard.mjs: a module.register resolve hook (it runs on Node's loader thread).
import { appendFileSync } from "node:fs";
import { allowedTarget, escapesCopy, forbiddenPackage, inside, isBuiltin, toPath, whereImported } from "./policy.mjs";

/** @type {{ policy: import("./policy.mjs").Policy, strict: boolean, log?: string }} */
let state;

/** @param {typeof state} data */
export function initialize(data) {
  state = data;
}

/** @param {string | undefined} importer @param {string} spec */
function refuse(importer, spec) {
  const where = whereImported(state.policy, importer, spec);
  try {
    if (state.log) appendFileSync(state.log, `${JSON.stringify({ where, spec: spec.slice(0, 200) })}\n`);
  } catch {
    // best effort
  }
  return new Error(`imports outside the submission: ${where} (${spec.slice(0, 200)})`);
}

/** @param {string} specifier @param {{ parentURL?: string }} context @param {Function} next */
export async function resolve(specifier, context, next) {
  if (!state) return next(specifier, context);
  if (/^(data|blob|https?):/i.test(specifier)) throw refuse(context.parentURL, specifier);
  if (isBuiltin(specifier)) return next(specifier, context);
  const fromCopy = context.parentURL !== undefined && inside(toPath(context.parentURL), state.policy.copy);
  if ((state.strict || fromCopy) && context.parentURL && (escapesCopy(state.policy, specifier, context.parentURL) || forbiddenPackage(state.policy, specifier))) {
    throw refuse(context.parentURL, specifier);
  }
  const result = await next(specifier, context);
  if ((state.strict || fromCopy) && !allowedTarget(state.policy, result.url)) throw refuse(context.parentURL, specifier);
  if (state.policy.hide.some((h) => inside(toPath(result.url), h))) throw refuse(context.parentURL, specifier);
  return result;
}
