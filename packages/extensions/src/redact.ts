// Secret redaction for every text the client emits: the stderr tail, error messages, trace
// events and fault reports. Whole occurrences are replaced anywhere; at the edges of a
// stream excerpt a fragment is replaced too: a tail whose head was cut may start with the
// end of a secret, and a stream still being written may end with the start of one.

/** What a secret is replaced with. */
export const REDACTED = "[REDACTED]";

export interface EdgeOptions {
  /** The text's start was cut off (a truncated tail): a leading secret suffix is redacted. */
  headCut?: boolean;
  /** The text may continue (a live stream): a trailing secret prefix is redacted. */
  open?: boolean;
}

export class Redactor {
  private readonly secrets: readonly string[];

  constructor(secrets: readonly string[] = []) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...new Set(secrets)].sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.secrets.length > 0;
  }

  // Replaces every whole secret, then the edge fragments the options ask for.
  redact(text: string, edges: EdgeOptions = {}): string {
    if (this.secrets.length === 0 || text === "") return text;
    let head = "";
    let body = text;
    let tail = "";
    if (edges.headCut) {
      const cut = this.longestEdge(body, (secret, n) => body.startsWith(secret.slice(secret.length - n)));
      if (cut > 0) {
        head = REDACTED;
        body = body.slice(cut);
      }
    }
    if (edges.open) {
      const cut = this.longestEdge(body, (secret, n) => body.endsWith(secret.slice(0, n)));
      if (cut > 0) {
        tail = REDACTED;
        body = body.slice(0, body.length - cut);
      }
    }
    return head + this.replaceWhole(body) + tail;
  }

  // Redacts every string inside a JSON-like value (remote error data), keeping its shape.
  redactValue(value: unknown, depth = 0): unknown {
    if (this.secrets.length === 0) return value;
    if (typeof value === "string") return this.redact(value);
    if (depth > 32 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map((item) => this.redactValue(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.redact(key)] = this.redactValue(item, depth + 1);
    return out;
  }

  // One left-to-right pass; at each position the longest secret that starts there wins.
  private replaceWhole(text: string): string {
    let out = "";
    let from = 0;
    for (let i = 0; i < text.length; ) {
      const secret = this.secrets.find((candidate) => text.startsWith(candidate, i));
      if (secret === undefined) {
        i += 1;
        continue;
      }
      out += text.slice(from, i) + REDACTED;
      i += secret.length;
      from = i;
    }
    return out + text.slice(from);
  }

  // The longest proper fragment (1 .. length-1 characters) of any secret that `matches`.
  private longestEdge(text: string, matches: (secret: string, n: number) => boolean): number {
    let best = 0;
    for (const secret of this.secrets) {
      for (let n = Math.min(secret.length - 1, text.length); n > best; n -= 1) {
        if (matches(secret, n)) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
