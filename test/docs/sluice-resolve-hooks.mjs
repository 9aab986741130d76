// Module resolution hooks (registered by sluice-from-src.mjs): the bare specifier `sluice` is the
// repository's src/index.ts; every other specifier resolves as usual.
const entry = new URL('../../src/index.ts', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  // Handed on, so tsx's own resolver sees the .ts file it is to compile.
  return nextResolve(specifier === 'sluice' ? entry : specifier, context);
}
