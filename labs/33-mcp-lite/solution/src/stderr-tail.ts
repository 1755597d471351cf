// Keeps the last `maxBytes` bytes of a stream (crash reasons are at the end) and says
// whether anything was dropped. Counted in bytes, decoded only when read, and cut on a
// UTF-8 character boundary so a Chinese character is never split into garbage.

import { decodeWholeCharacters } from "./utf8.ts";

// Kept here too: callers imported it from this module before utf8.ts existed.
export { decodeWholeCharacters } from "./utf8.ts";

export class StderrTail {
  readonly maxBytes: number;
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get truncated(): boolean {
    return this.dropped;
  }

  // Stryker disable next-line BlockStatement: the client never reads it (the starter's tail has the same surface); §1 has no size
  get size(): number {
    return this.bytes;
  }

  // Appends a chunk, then drops whole chunks and finally part of one from the head until
  // at most maxBytes are kept.
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.maxBytes) {
      const head = this.chunks[0]!;
      const excess = this.bytes - this.maxBytes;
      this.dropped = true;
      // Stryker disable next-line EqualityOperator: with `<`, a head of exactly `excess` bytes is cut to an empty buffer instead of removed; same bytes kept
      if (head.length <= excess) {
        this.chunks.shift();
        this.bytes -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  get text(): string {
    const all = Buffer.concat(this.chunks, this.bytes);
    return decodeWholeCharacters(all, this.dropped);
  }
}
