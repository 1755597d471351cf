// --format prairielearn: PrairieLearn's external-grading results.json. `score` is the
// graded fraction (0..1) of the evidence, rubric and orphan checks; `gradable: false` with
// `format_errors` when nothing could run (the submission does not load or compile), so the
// learner loses no attempt; one entry in `tests` per check with points, max_points and why.
// Homework checks are listed at 0 of 0 points with the bonus they earned in their message:
// the results panel totals every test's points and max_points (a test with max_points 0 is
// shown neutrally), so bonus points there would read as 98/110 for a full-marks submission.
// The bonus never changes `score`; the header line says it.

import type { GradeResult } from "../grade-result.ts";
import { renderText } from "./text.ts";

/** PrairieLearn's limit on the whole file is 1 MB; the text output is kept well below. */
export const PRAIRIELEARN_OUTPUT_MAX = 200_000;

export function renderPrairieLearn(result: GradeResult): string {
  const noneRan = result.status === "error" && result.checks.every((c) => c.tests.length === 0);
  const header = `${result.lab}: ${result.status} · ${result.score}/${result.maxScore}${result.bonus.maxScore > 0 ? ` · bonus ${result.bonus.score}/${result.bonus.maxScore}` : ""} · seed ${result.seed}`;
  if (noneRan) {
    const message = result.message ?? "could not grade";
    return `${JSON.stringify({ gradable: false, format_errors: [message], message: `${header}\n${message}` }, null, 2)}\n`;
  }
  const tests = result.checks.map((c) => ({
    name: c.id,
    description: c.title,
    points: c.kind === "homework" ? 0 : c.score,
    max_points: c.kind === "homework" ? 0 : c.maxScore,
    message: [c.kind === "homework" ? bonusLine(result, c.score, c.maxScore) : "", c.status === "pass" ? c.message : [c.message, c.hint, c.lesson].filter(Boolean).join("\n")].filter(Boolean).join("\n"),
    output: c.tests.map((t) => `${t.status === "pass" ? "✔" : t.status === "skip" ? "-" : "✘"} ${t.label ?? t.title}${t.status === "fail" && t.message ? `\n  ${t.message}` : ""}`).join("\n"),
  }));
  return `${JSON.stringify(
    {
      gradable: true,
      score: result.maxScore > 0 ? result.score / result.maxScore : 0,
      message: result.message ? `${header}\n${result.message}` : header,
      output: renderText(result).slice(0, PRAIRIELEARN_OUTPUT_MAX),
      tests,
    },
    null,
    2,
  )}\n`;
}

// The bonus a homework check earned, said in the result's language.
function bonusLine(result: GradeResult, score: number, maxScore: number): string {
  return result.lang === "en" ? `bonus ${score}/${maxScore} (not part of the score)` : `加分 ${score}/${maxScore}（不计入本题得分）`;
}
