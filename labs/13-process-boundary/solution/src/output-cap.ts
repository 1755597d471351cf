// Keeps at most maxBytes of one output stream, counting bytes (not characters), and says
// the moment the limit is passed, so the caller can stop the program instead of letting
// an endless writer fill memory.

export class CappedOutput {
  readonly maxBytes: number;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private over = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** True once more than maxBytes arrived; later chunks are dropped. */
  get exceeded(): boolean {
    return this.over;
  }

  // #region lesson:capped-push
  // Adds one chunk; returns true when this chunk passed the limit (only the first time).
  push(chunk: Buffer): boolean {
    if (this.over) return false;
    const room = this.maxBytes - this.bytes;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.bytes = this.maxBytes;
      this.over = true;
      return true;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    return false;
  }
  // #endregion lesson:capped-push

  // The kept bytes as text; a multi-byte character cut at the limit is dropped, not mangled.
  text(): string {
    const all = Buffer.concat(this.chunks);
    let end = all.length;
    if (this.over) {
      let start = end - 1;
      while (start >= 0 && start > end - 4 && (all[start]! & 0xc0) === 0x80) start--;
      if (start >= 0) {
        const lead = all[start]!;
        const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
        if (end - start < need) end = start;
      }
    }
    return all.subarray(0, end).toString("utf8");
  }
}
