// The names of the describe blocks around a test, outermost first (its "ancestor titles"),
// for the progress reporters of the grade and of the learner's loop.

import type { TestCase } from "vitest/node";

export function suiteNames(test: TestCase): string[] {
  const names: string[] = [];
  let parent = test.parent;
  while (parent.type === "suite") {
    names.unshift(parent.name);
    parent = parent.parent;
  }
  return names;
}
