// The result channel: what crosses the sandbox boundary from vitest's main process to the
// outer grader. The outer grader owns both ends (a pipe it passes as fd 3) and the key
// (32 random bytes, written once to the payload's stdin and never to argv, env or a file).
// Every record is one line `<hmac> <json>` where the JSON carries a sequence number and the
// HMAC-SHA256 covers the JSON: a submission, which runs as the same user as vitest's main
// process and can reopen its fd 3 through /proc, can neither forge nor replay a record, nor
// steal one unnoticed (a gap in the sequence). Any bad record makes the channel tampered.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Readable } from "node:stream";

export function newKey(): string {
  return randomBytes(32).toString("hex");
}

export function sign(key: string, json: string): string {
  return createHmac("sha256", key).update(json).digest("hex");
}

export interface ChannelReader {
  /** Verified records, in order. */
  records: Array<Record<string, unknown>>;
  /** Set when a record was forged, replayed, out of order or missing. */
  tampered?: string;
  /** Resolves when the channel's write ends are all closed. */
  closed: Promise<void>;
}

// Calls `take` with each complete line of a stream of chunks (a last line without its newline
// is never taken). Only the new chunk can hold the next line's end: a long record (a test's
// wire log) arriving in many chunks is scanned once, not once per chunk.
function splitLines(take: (line: string) => void): (chunk: string) => void {
  let pending: string[] = [];
  return (chunk) => {
    let at = chunk.indexOf("\n");
    if (at === -1) {
      pending.push(chunk);
      return;
    }
    let line = pending.join("") + chunk.slice(0, at);
    pending = [];
    for (;;) {
      take(line);
      const from = at + 1;
      at = chunk.indexOf("\n", from);
      if (at === -1) {
        if (from < chunk.length) pending.push(chunk.slice(from));
        return;
      }
      line = chunk.slice(from, at);
    }
  };
}

// Reads and verifies the records of one channel as they arrive.
export function readChannel(stream: Readable, key: string, maxBytes = 64 * 1024 * 1024): ChannelReader {
  const reader: ChannelReader = { records: [], closed: Promise.resolve() };
  let total = 0;
  let next = 0;
  const take = (line: string) => {
    if (reader.tampered || !line) return;
    const space = line.indexOf(" ");
    const mac = line.slice(0, space);
    const json = line.slice(space + 1);
    const expected = sign(key, json);
    if (space !== 64 || !timingSafeEqual(Buffer.from(mac.padEnd(64, "0").slice(0, 64)), Buffer.from(expected))) {
      reader.tampered = "a record with a wrong signature";
      return;
    }
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(json) as Record<string, unknown>;
    } catch {
      reader.tampered = "an unreadable record";
      return;
    }
    if (record.seq !== next) {
      reader.tampered = `record ${String(record.seq)} where ${next} was due`;
      return;
    }
    next += 1;
    reader.records.push(record);
  };
  const lines = splitLines(take);
  stream.setEncoding("utf8");
  reader.closed = new Promise((resolve) => {
    stream.on("data", (chunk: string) => {
      total += chunk.length;
      if (total > maxBytes) {
        reader.tampered ??= "more than the channel's size limit";
        return;
      }
      lines(chunk);
    });
    stream.on("close", () => resolve());
    stream.on("error", () => resolve());
  });
  return reader;
}
