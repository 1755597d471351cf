// Finds sentences cut short in a Markdown text (Chinese or English): a paragraph that stops
// on a comma, a semicolon or in the middle of a word, or a list item that stops on a comma, or
// on a semicolon with no item after it. The student edition is built by leaving passages out,
// so a cut like "…信号发给整个组；" is exactly what a missing line leaves behind.

/** Characters a finished paragraph may end on (after trailing emphasis and quotes are removed). */
const FINAL = /[。！？：.!?:)）」』"”>|]$/;
/** Characters only a continued sentence ends on. */
const CONTINUED = /[，,；;、]$/;

interface Block {
  line: number;
  /** Last line of the block (1-based). */
  last: number;
  text: string;
  list: boolean;
}

// The prose blocks of a Markdown text: paragraphs and list items, without code, tables,
// headings, HTML comments and anchors.
function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split("\n");
  let current: Block | undefined;
  let fence = false;
  const flush = () => {
    if (current) out.push(current);
    current = undefined;
  };
  lines.forEach((raw, i) => {
    if (raw.trimStart().startsWith("```")) {
      flush();
      fence = !fence;
      return;
    }
    if (fence) return;
    const line = raw.replace(/^\s*>\s?/, "").trimEnd();
    if (line.trim() === "" || /^\s*(#|\||<!--|<a id=|-{3,}\s*$|<\/?\w+[^>]*>\s*$)/.test(line)) {
      flush();
      return;
    }
    const item = /^\s*([-*]|\d+(–\d+)?\.)\s+/.exec(line);
    if (item) {
      flush();
      current = { line: i + 1, last: i + 1, text: line.slice(item[0].length), list: true };
    } else if (current) {
      current.text += ` ${line.trim()}`;
      current.last = i + 1;
    } else current = { line: i + 1, last: i + 1, text: line.trim(), list: false };
  });
  flush();
  return out;
}

// Every block that ends the way a cut sentence does, with its first line (1-based).
export function cutSentences(markdown: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const all = blocks(markdown);
  all.forEach((block, k) => {
    const end = block.text.replace(/[*_`\s]+$/, "").replace(/\]\([^)]*\)$/, "]").replace(/]$/, "");
    if (end === "") return;
    const next = all[k + 1];
    const itemFollows = block.list && next?.list === true && next.line === block.last + 1; // the next item of the same list
    let cut = false;
    // A sentence that starts in lower case right after another ended: the lines between went missing.
    if (/\b(?!etc\.)[A-Za-z]{3,}\. [a-z]{2,}/.test(block.text.replace(/`[^`]*`/g, "x"))) cut = true;
    else if (/[，,、]$/.test(end)) cut = true;
    else if (/[；;]$/.test(end)) cut = !itemFollows;
    else if (!block.list && !FINAL.test(end) && !CONTINUED.test(end)) cut = true;
    if (cut) found.push({ line: block.line, text: block.text.length > 120 ? `…${block.text.slice(-120)}` : block.text });
  });
  return found;
}
