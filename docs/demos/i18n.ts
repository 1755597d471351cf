// Narration language for the demos: Simplified Chinese by default, English with --lang en.

export type Lang = "zh" | "en";

/** A narration line in both languages. */
export type Text = { zh: string; en: string };

export function parseLang(value: string | undefined): Lang | undefined {
  if (value === undefined) return undefined;
  if (value === "zh" || value === "zh-CN") return "zh";
  if (value === "en") return "en";
  return undefined;
}

// Picks the language and fills {name} placeholders.
export function say(lang: Lang, text: Text, vars: Record<string, unknown> = {}): string {
  return text[lang].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}
