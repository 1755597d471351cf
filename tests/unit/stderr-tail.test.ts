import { describe, expect, it } from "vitest";
import { decodeWholeCharacters, StderrTail } from "#submission/src/stderr-tail.ts";

/** Chunks pushed in one step (text, or raw bytes), then what the tail must hold. */
type Step = [pushed: Array<string | number[]>, holds: { text?: string; truncated?: boolean; size?: number }];

const bytes = (chunk: string | number[]) => (typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));

// Each case: a cap in bytes, then the chunks pushed step by step and what the tail holds after each step.
const CASES: Array<[title: string, cap: number, steps: Step[]]> = [
  ["keeps everything while under the cap", 16, [[["abc", "def"], { text: "abcdef", truncated: false, size: 6 }]]],
  ["keeps the last bytes and says it dropped the rest", 8, [[["0123", "4567", "89ab", "cdef"], { text: "89abcdef", truncated: true, size: 8 }]]],
  ["keeps the tail of a single chunk larger than the cap", 4, [[["hello world"], { text: "orld", truncated: true }]]],
  ["keeps nothing with a zero cap but still reports truncation", 0, [[["x"], { text: "", truncated: true }]]],
  ["cuts inside the oldest chunk when dropping it whole would keep too little", 5, [
    [["abc", "defg"], { text: "cdefg", truncated: true, size: 5 }],
    [["h"], { text: "defgh", size: 5 }],
  ]],
  ["drops several whole chunks at once and then cuts the next", 4, [[["a", "b", "c", "defgh"], { text: "efgh", truncated: true, size: 4 }]]],
  ["is not truncated when it holds exactly the cap, and is once one more byte comes", 5, [
    [["ab", "cde"], { text: "abcde", truncated: false, size: 5 }],
    [["f"], { text: "bcdef", truncated: true, size: 5 }],
  ]],
  ["keeps an empty chunk from counting as dropped output", 0, [[[""], { text: "", truncated: false, size: 0 }]]],
  ["decodes stray bytes at the head as they are while nothing was dropped", 8, [[[[0x80, 0x61]], { text: "\ufffda", truncated: false }]]],
  // "错误" is 6 bytes: one byte of "错" goes.
  ["drops a character cut at the head only once bytes were dropped", 5, [[["错误"], { text: "误", truncated: true, size: 5 }]]],
];

describe("StderrTail", () => {
  it.each(CASES)("%s", (_title, cap, steps) => {
    const tail = new StderrTail(cap);
    for (const [pushed, holds] of steps) {
      for (const chunk of pushed) tail.push(bytes(chunk));
      expect(tail).toMatchObject(holds);
    }
  });

  it("never shows half a Chinese character at either end", () => {
    const tail = new StderrTail(7); // "崩溃了" is 9 bytes: the cut lands inside "崩"
    tail.push(Buffer.from("崩溃了"));
    expect(tail.text).toBe("溃了");
    expect(tail.truncated).toBe(true);
    // A writer that stopped mid-character: the unfinished tail is not decoded as garbage.
    const bytes = Buffer.from("错误");
    expect(decodeWholeCharacters(bytes.subarray(0, 4), false)).toBe("错");
  });
});
