// Turns a saved native grade result into Classroom 50's result.json (schema
// "classroom50/result/v1": foundation50/classroom50, schemas/result-v1.schema.json), for
// autograder.py beside this file:
//   node result.mjs NATIVE.json RESULT.json
// One test per check: `test-name` the check id and title, `passed`, `score` and `max-score`
// (integers, the check's weight), and the reason and hint in `message`. Homework checks are
// tests worth 0 of 0 with the bonus they earned in their message, so the classroom's gradebook
// total is out of 100 (the bonus stays in the message and in the native result). A grade that
// could not run has no passing test and scores 0. The identity fields come from the runner's
// environment (CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL, RELEASE_URL, REVIEW_URL);
// `owner` and `assignment_type` are left to the runner, which stamps them itself.
// Prints `status=… summary=…` lines for $GITHUB_OUTPUT on stdout.
// @ts-check
import { readFileSync, writeFileSync } from "node:fs";

const [nativeFile, resultFile] = process.argv.slice(2);
if (!nativeFile || !resultFile) {
  process.stderr.write("usage: node result.mjs NATIVE.json RESULT.json\n");
  process.exit(2);
}
const env = process.env;
const missing = ["CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL"].filter((name) => !env[name]);
if (missing.length > 0) {
  process.stderr.write(`result.mjs: the runner's ${missing.join(", ")} missing (run it from Classroom 50's autograde runner)\n`);
  process.exit(2);
}

/** @type {{ status: string, score: number, maxScore: number, bonus?: { score: number, maxScore: number }, lang?: string, message?: string, checks: Array<{ id: string, kind: string, title?: string, status: string, score: number, maxScore: number, message: string, hint?: string }> }} */
const native = JSON.parse(readFileSync(nativeFile, "utf8"));
const en = native.lang === "en";

const tests = native.checks.map((c) => {
  const homework = c.kind === "homework";
  const bonus = homework ? (en ? `bonus ${c.score}/${c.maxScore} (not part of the score)` : `加分 ${c.score}/${c.maxScore}（不计入总分）`) : "";
  return {
    "test-name": c.title ? `${c.id}: ${c.title}` : c.id,
    passed: c.status === "pass",
    score: homework ? 0 : Math.max(0, Math.round(c.score)),
    "max-score": homework ? 0 : Math.max(0, Math.round(c.maxScore)),
    message: [bonus, c.message, c.status === "pass" ? "" : (c.hint ?? "")].filter(Boolean).join("\n"),
  };
});
const score = tests.reduce((sum, t) => sum + t.score, 0);
const maxScore = tests.reduce((sum, t) => sum + t["max-score"], 0);
const result = {
  schema: "classroom50/result/v1",
  classroom: env.CLASSROOM,
  assignment: env.ASSIGNMENT,
  submission: env.SUBMISSION_TAG,
  commit: env.COMMIT_URL,
  release: env.RELEASE_URL,
  review: env.REVIEW_URL || env.COMMIT_URL,
  datetime: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
  score,
  "max-score": maxScore,
  tests,
};
writeFileSync(resultFile, `${JSON.stringify(result, null, 2)}\n`);
const state = native.status === "pass" ? "success" : native.status === "fail" ? "failure" : "error";
const bonusText = native.bonus && native.bonus.maxScore > 0 ? ` + bonus ${native.bonus.score}/${native.bonus.maxScore}` : "";
process.stdout.write(`status=${state}\nsummary=lab33 ${native.status} ${score}/${maxScore}${bonusText}\n`);
