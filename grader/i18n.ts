// What the grader itself says to a learner, in Simplified Chinese (default) or English: the
// catalogue is messages.json (one entry per message, {name} placeholders), filled by the
// shared rule of message-template.ts. Messages produced by the lab's tests
// (tests/messages.ts) reach the report unchanged.

import catalog from "./messages.json" with { type: "json" };
import { fillTemplate, type Lang } from "./message-template.ts";

export type GraderMessage = keyof typeof catalog;

// Fills a grader message with its parameters in the chosen language.
export function t(key: GraderMessage, lang: Lang, params: Record<string, unknown> = {}): string {
  return fillTemplate(catalog[key][lang], params);
}
