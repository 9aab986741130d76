// Preloaded (`node --import`) before a doc block runs: the block's `import ... from 'sluice'` gets the
// package's source entry, src/index.ts (compiled by tsx, loaded before this), instead of dist/, which
// only `npm run build` writes. The packed package itself is tested by test/package/package.test.ts.
import { register } from 'node:module';

register('./sluice-resolve-hooks.mjs', import.meta.url);
