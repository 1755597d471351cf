// Text the submission controls (messages, names, stderr, wire traces), made safe to print:
// every control character but tab and newline, and the bidirectional overrides, shown as a
// \uXXXX escape instead of acting. Without it an error message holding ESC sequences or a
// carriage return could rewrite the terminal's report (a forged "PASS · 100/100" above a
// grade that was an error, the real lines hidden), and a folder name in a batch could print a
// progress line of its own.

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with every control character but \t and \n escaped. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The text as one printable line (newlines and tabs escaped too). */
export function printableLine(text: string): string {
  return printable(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
