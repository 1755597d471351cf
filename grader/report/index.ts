// Picks the renderer for --format.

import type { GradeResult } from "../grade-result.ts";
import { renderExercism } from "./exercism.ts";
import { renderGradescope } from "./gradescope.ts";
import { renderJunit } from "./junit.ts";
import { renderMarkdown } from "./markdown.ts";
import { renderPrairieLearn } from "./prairielearn.ts";
import { renderText } from "./text.ts";

/** Each --format and its renderer (json: the native result as it is). */
const RENDERERS = {
  text: renderText,
  json: (result: GradeResult) => `${JSON.stringify(result, null, 2)}\n`,
  markdown: renderMarkdown,
  gradescope: renderGradescope,
  exercism: renderExercism,
  junit: renderJunit,
  prairielearn: renderPrairieLearn,
} as const;

export type Format = keyof typeof RENDERERS;
export const FORMATS = Object.keys(RENDERERS) as Format[];

export function render(result: GradeResult, format: Format): string {
  return RENDERERS[format](result);
}
