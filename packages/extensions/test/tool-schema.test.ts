// The limits one untrusted inputSchema must meet (tool-schema.ts); the tool adapter's tests
// (tool-adapter.test.ts) drive the same checks through whole tools/list results.

import { describe, expect, it } from "vitest";
import { checkSchema, compileSchema, riskyPattern } from "../src/tool-schema.ts";

const limits = { maxSchemaBytes: 16 * 1024, maxSchemaDepth: 10 };

describe("checkSchema", () => {
  it("refuses a schema that cannot be serialized, and keeps a private copy of one that can", () => {
    expect(checkSchema({ type: "object", default: 10n }, limits)).toBe("inputSchema is not serializable");
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const copy = checkSchema(schema, limits);
    expect(copy).toEqual(schema);
    expect(copy).not.toBe(schema);
  });
});

describe("compileSchema", () => {
  it("cuts a compile error's message at 200 characters", () => {
    const ref = `#/definitions/${"x".repeat(300)}`;
    const outcome = compileSchema({ type: "object", properties: { a: { $ref: ref } } });
    expect(typeof outcome).toBe("string");
    expect(outcome).toMatch(/^inputSchema does not compile: can't resolve reference #\/definitions\/x+$/);
    expect((outcome as string).length).toBe("inputSchema does not compile: ".length + 200);
  });
});

describe("compileSchema's cache", () => {
  it("gives a schema seen before (the same JSON) the validator it got then, and keeps the last 256", () => {
    const schema = (n: number) => ({ type: "object", properties: { n: { const: n } }, required: ["n"] });
    const first = compileSchema(schema(1));
    expect(typeof first).toBe("function");
    // A fresh object with the same JSON: no second compile.
    expect(compileSchema(schema(1))).toBe(first);
    const other = compileSchema(schema(2));
    expect(other).not.toBe(first);
    expect(typeof other === "function" && other({ n: 2 })).toBe(true);
    expect(typeof other === "function" && other({ n: 1 })).toBe(false);
    // 256 other schemas later the first one is compiled again.
    for (let n = 3; n < 3 + 256; n += 1) compileSchema(schema(n));
    const again = compileSchema(schema(1));
    expect(again).not.toBe(first);
    expect(typeof again === "function" && again({ n: 1 })).toBe(true);
    // Refusals are kept too, with their reason.
    expect(compileSchema({ type: "object", properties: { a: { type: 7 } } })).toMatch(/not a valid JSON Schema/);
    expect(compileSchema({ type: "object", properties: { a: { type: 7 } } })).toMatch(/not a valid JSON Schema/);
  });
});

describe("riskyPattern", () => {
  it.each([
    ["(ab+)+", "several characters before the inner quantifier"],
    ["(x{10,})+", "a multi-digit inner bound"],
    ["(x{2,5})+", "an inner bound with a maximum"],
    ["(x+){10,}", "a multi-digit outer bound"],
    ["(x+){2,5}", "an outer bound with a maximum"],
  ])("finds nested quantifiers in %s (%s)", (pattern) => {
    expect(riskyPattern({ pattern })).toBe(`${JSON.stringify(pattern)} nests quantifiers`);
  });

  it("walks past null values anywhere in the schema", () => {
    expect(riskyPattern({ type: "object", default: null, properties: { a: { const: null } } })).toBeUndefined();
    expect(riskyPattern({ a: null, b: { pattern: "(a*)*" } })).toBe('"(a*)*" nests quantifiers');
  });
});
