#!/usr/bin/env node
// The installed `sluice` command: registers tsx (Sluice runs from its TypeScript sources) and runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
