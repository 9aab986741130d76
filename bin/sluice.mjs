#!/usr/bin/env node
// The `sluice` command. An installed package runs the compiled CLI (dist/cli.js, plain Node); a
// checkout of the repository runs the TypeScript sources through tsx (a dev dependency), so what
// runs is always the code being edited, never a stale build.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli.js');
}
