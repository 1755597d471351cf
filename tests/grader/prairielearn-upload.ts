// PrairieLearn's rule for which uploaded files a `<pl-file-upload>` element keeps, written
// from its documentation (docs/elements/pl-file-upload.md: "If file names or patterns
// overlap, uploaded files are first used to fill the required file names …") and checked
// against its implementation (apps/prairielearn/elements/pl-file-upload/pl-file-upload.py,
// parse(); PrairieLearn/PrairieLearn at 88fb8556). In that order:
//   1. every upload named in `file-names` is kept; a listed name not uploaded is a format error;
//   2. each pattern of `file-patterns` takes ONE of the remaining uploads (a pattern listed
//      twice takes two); a pattern left without a file is a format error;
//   3. remaining uploads named in `optional-file-names` are kept;
//   4. remaining uploads matching any `optional-file-patterns` pattern are kept, any number;
//   5. everything else is dropped without a word.
// Patterns are fnmatch globs (`*`, `?`, `[seq]`, `[!seq]`), matched case-insensitively against
// the whole name; names and patterns are comma-separated lists where `\,` is a literal comma,
// and may not contain `/` (an upload is a flat set of file names).

export interface UploadElement {
  fileNames: string[];
  filePatterns: string[];
  optionalFileNames: string[];
  optionalFilePatterns: string[];
}

export interface UploadOutcome {
  kept: string[];
  formatErrors: string[];
}

// The attributes of the first <pl-file-upload> in a question.html.
export function uploadElement(html: string): UploadElement {
  const tag = /<pl-file-upload\b([^>]*)>/.exec(html);
  if (!tag) throw new Error("no <pl-file-upload> element");
  const attr = (name: string) => csvList(new RegExp(`(?:^|\\s)${name}="([^"]*)"`).exec(tag[1]!)?.[1] ?? "");
  const element = { fileNames: attr("file-names"), filePatterns: attr("file-patterns"), optionalFileNames: attr("optional-file-names"), optionalFilePatterns: attr("optional-file-patterns") };
  for (const value of Object.values(element).flat()) if (value.includes("/")) throw new Error(`"${value}": PrairieLearn refuses a "/" in file names and patterns`);
  return element;
}

// A comma-separated attribute: `\` escapes the next character, spaces after a comma are skipped.
function csvList(raw: string): string[] {
  if (raw === "") return [];
  const out: string[] = [];
  let item = "";
  let start = true;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (start && ch === " ") continue;
    start = false;
    if (ch === "\\" && i + 1 < raw.length) item += raw[++i];
    else if (ch === ",") {
      out.push(item);
      item = "";
      start = true;
    } else item += ch;
  }
  out.push(item);
  return out;
}

// An fnmatch glob as an anchored, case-insensitive regular expression.
export function globRegex(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    const close = ch === "[" ? glob.indexOf("]", i + 2) : -1;
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else if (close > 0) {
      const body = glob.slice(i + 1, close);
      source += body.startsWith("!") ? `[^${body.slice(1).replace(/\\/g, "\\\\")}]` : `[${body.replace(/\\/g, "\\\\")}]`;
      i = close;
    } else source += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "is");
}

// Which of `uploaded` PrairieLearn keeps for this element, and the format errors it raises.
export function applyUpload(element: UploadElement, uploaded: string[]): UploadOutcome {
  const kept = new Set(uploaded.filter((name) => element.fileNames.includes(name)));
  const formatErrors: string[] = [];
  const missingNames = element.fileNames.filter((name) => !uploaded.includes(name));
  if (missingNames.length > 0) formatErrors.push(`The following required files were missing: ${missingNames.join(", ")}`);
  let remaining = uploaded.filter((name) => !kept.has(name));
  const missingPatterns: string[] = [];
  for (const pattern of element.filePatterns) {
    const match = remaining.find((name) => globRegex(pattern).test(name));
    if (match === undefined) missingPatterns.push(pattern);
    else {
      kept.add(match);
      remaining = remaining.filter((name) => name !== match);
    }
  }
  if (missingPatterns.length > 0) formatErrors.push(`The following required file patterns were missing: ${missingPatterns.join(", ")}`);
  for (const name of remaining) {
    if (element.optionalFileNames.includes(name) || element.optionalFilePatterns.some((p) => globRegex(p).test(name))) kept.add(name);
  }
  return { kept: uploaded.filter((name) => kept.has(name)), formatErrors };
}
