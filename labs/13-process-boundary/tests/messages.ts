// What a failing lesson 13 evidence test tells the learner, in Simplified Chinese (default)
// or English (LAB_LANG=en): the catalogue is messages.json beside this file. The grader
// shows these messages as they are.

import { filler } from "../../../grader/message-template.ts";
import catalog from "./messages.json" with { type: "json" };

export { LANG, say, type Lang } from "../../../grader/message-template.ts";

export type MessageKey = keyof typeof catalog;

/** Fills a catalogue message with its parameters in the chosen language (default LANG). */
export const msg = filler<MessageKey>(catalog);
