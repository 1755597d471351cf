// Read by nobody but a compiler that can see the hidden corpus: the entry's type names this
// file, and its literal in a report would prove the type check read outside the copy.
export const MARK = "corpus-typecheck-marker-7f3a" as const;
