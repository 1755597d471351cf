// `await using` for the package's closeable objects (McpClient, McpManager):
// [Symbol.asyncDispose]() is their close(). It is defined only where the runtime has the
// symbol (Node >= 20.4, 18.18): a computed method named by an undefined Symbol.asyncDispose
// would become a method called "undefined".

interface Closeable {
  close(): Promise<void>;
}

// Defines [Symbol.asyncDispose]() as close() on the class's prototype; `symbols` stands in
// for the global Symbol so the guard can be tested on a runtime that has the symbol.
export function defineAsyncDispose(target: { prototype: Closeable }, symbols: { readonly asyncDispose?: symbol } = Symbol): void {
  const symbol = symbols.asyncDispose;
  if (typeof symbol !== "symbol") return;
  Object.defineProperty(target.prototype, symbol, {
    value: function asyncDispose(this: Closeable): Promise<void> {
      return this.close();
    },
    writable: true,
    configurable: true,
    enumerable: false,
  });
}
