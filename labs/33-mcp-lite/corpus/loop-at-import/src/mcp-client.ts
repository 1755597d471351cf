// Corpus: the module never finishes loading.
export class McpError extends Error {}
export class McpClient {}
let spins = 0;
const forever = (): boolean => spins >= 0;
while (forever()) spins += 1;
