// Picks the renderer for --format.

import type { GradeResult } from "../result.ts";
import { renderText } from "./text.ts";

export const FORMATS = ["text", "json", "markdown", "gradescope", "exercism", "junit"] as const;
export type Format = (typeof FORMATS)[number];

export function render(result: GradeResult, format: Format): string {
  switch (format) {
    case "json":
      return `${JSON.stringify(result, null, 2)}\n`;
    case "text":
    default:
      return renderText(result);
  }
}
