// Picks the renderer for --format.

import type { GradeResult } from "../grade-result.ts";
import { renderExercism } from "./exercism.ts";
import { renderGradescope } from "./gradescope.ts";
import { renderJunit } from "./junit.ts";
import { renderMarkdown } from "./markdown.ts";
import { renderPrairieLearn } from "./prairielearn.ts";
import { renderText } from "./text.ts";

export const FORMATS = ["text", "json", "markdown", "gradescope", "exercism", "junit", "prairielearn"] as const;
export type Format = (typeof FORMATS)[number];

export function render(result: GradeResult, format: Format): string {
  switch (format) {
    case "json":
      return `${JSON.stringify(result, null, 2)}\n`;
    case "markdown":
      return renderMarkdown(result);
    case "gradescope":
      return renderGradescope(result);
    case "exercism":
      return renderExercism(result);
    case "junit":
      return renderJunit(result);
    case "prairielearn":
      return renderPrairieLearn(result);
    case "text":
      return renderText(result);
  }
}
