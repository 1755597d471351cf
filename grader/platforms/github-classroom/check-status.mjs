// Exits 0 when the check named on the command line passed in a saved grade result, 1
// otherwise (printing why), so each GitHub Classroom test awards that check's points.
// Usage: node check-status.mjs grade.json evidence/happy-path
// @ts-check
import { readFileSync } from "node:fs";

/** @typedef {{ id: string, status: string, score: number, maxScore: number, message: string, hint?: string }} Check */

const [file = "grade.json", id = ""] = process.argv.slice(2);
/** @type {{ status?: string, message?: string, checks?: Check[] }} */
let result;
try {
  result = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`no grade result in ${file}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const check = (result.checks ?? []).find((c) => c.id === id);
if (!check) {
  console.error(`${id}: not in the result (status ${result.status}: ${result.message ?? ""})`);
  process.exit(1);
}
console.log(`${id}: ${check.status} (${check.score}/${check.maxScore}) ${check.message}`);
if (check.hint) console.log(check.hint);
process.exit(check.status === "pass" ? 0 : 1);
