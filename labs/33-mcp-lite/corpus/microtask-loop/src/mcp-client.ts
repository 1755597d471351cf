// Corpus: a microtask loop started at import starves the event loop (no timer ever fires).
export class McpError extends Error {}
export class McpClient {}
const spin = (): Promise<void> => Promise.resolve().then(spin);
void spin();
