// The one rule for turning a message catalogue entry into text, shared by the grader's own
// messages (i18n.ts) and by every lab's test, probe and homework messages: `{name}` is
// replaced by the parameter of that name, a string as it is, anything else as JSON cut to
// MAX_VALUE_CHARS characters. Each catalogue stays beside the code that uses it.

export type Lang = "zh" | "en";

/** A catalogue entry: the same message in each language. */
export type Texts = Record<Lang, string>;

/** The learner's language for lab tests: LAB_LANG=en picks English, else Simplified Chinese. */
export const LANG: Lang = process.env.LAB_LANG === "en" ? "en" : "zh";

/** Longest rendering of a non-string parameter, in characters (then "…"). */
export const MAX_VALUE_CHARS = 200;

// Renders one parameter: strings verbatim, other values as JSON, cut to a readable length.
export function showValue(value: unknown): string {
  if (typeof value === "string") return value;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

// Fills every {name} placeholder of a template.
export function fillTemplate(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => showValue(params[name]));
}

// A catalogue's filler: the entry for `key` in `lang`, with its placeholders filled.
export function filler<K extends string>(catalogue: Record<K, Texts>): (key: K, params?: Record<string, unknown>, lang?: Lang) => string {
  return (key, params = {}, lang = LANG) => fillTemplate(catalogue[key][lang], params);
}

/** A label or phrase that goes inside a message, in the chosen language. */
export function say(zh: string, en: string, lang: Lang = LANG): string {
  return lang === "en" ? en : zh;
}
