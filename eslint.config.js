// Lint: typescript-eslint's recommended rules plus the architecture's import direction — which
// folder of src may import which (the table below, drawn the same way in ARCHITECTURE.md,
// "Layers") — and parser library types stay inside src/parser.
import tseslint from 'typescript-eslint';

// The folders of src. A file may import its own folder, the folders its layer lists, and npm
// packages; nothing else in src. src/index.ts and src/cli.ts (the library and CLI entry points)
// and src/server are the top: they may import everything, and nothing below imports them.
const FOLDERS = [
  'common',
  'parser',
  'planner',
  'ivm',
  'exec',
  'storage',
  'source',
  'sink',
  'server',
  'console',
];
// Matched by file name: they are the only index.ts and cli.ts in src.
const ENTRY_POINTS = ['index.ts', 'cli.ts'];

const layers = [
  {
    files: ['src/common/**/*.ts'],
    folder: 'common',
    may: [],
    why: 'the bottom layer imports nothing above it',
  },
  { files: ['src/parser/**/*.ts'], folder: 'parser', may: ['common'], why: 'the parser knows only SQL text' },
  {
    files: ['src/planner/**/*.ts'],
    folder: 'planner',
    may: ['common', 'parser'],
    why: 'the planner never imports the operators or the runtime',
  },
  {
    files: ['src/ivm/**/*.ts'],
    ignores: ['src/ivm/lower.ts', 'src/ivm/lower-hop-panes.ts'],
    folder: 'ivm',
    may: ['common'],
    why: 'operators never import the planner or the runtime',
  },
  // A real dependency, kept: lowering (LogicalPlan → DataflowPlan) lives in src/ivm and reads the
  // planner's LogicalPlan and ColumnMeta types, so this one file may import src/planner (types only
  // today; lower-hop-panes.ts is part of lowering). Moving lowering out of src/ivm would end the exception.
  {
    files: ['src/ivm/lower.ts', 'src/ivm/lower-hop-panes.ts'],
    folder: 'ivm',
    may: ['common', 'planner'],
    why: 'only lowering reads the planner',
  },
  {
    files: ['src/exec/**/*.ts'],
    folder: 'exec',
    may: ['common', 'parser', 'planner', 'ivm'],
    why: 'the runtime never imports storage, connectors or the server (the journal is a hook)',
  },
  {
    files: ['src/storage/**/*.ts'],
    folder: 'storage',
    may: ['common'],
    why: 'storage knows data, not the engine',
  },
  {
    files: ['src/source/**/*.ts'],
    folder: 'source',
    may: ['common'],
    why: 'connectors know deltas, never plans',
  },
  // The Kafka sink shares the source's client interface and deadline helper.
  {
    files: ['src/sink/**/*.ts'],
    folder: 'sink',
    may: ['common', 'source'],
    why: 'connectors know deltas, never plans',
  },
  // Browser code (bundled by esbuild) and what it shares with the server side of the console; the
  // server registers the console's fastify plugin, which reads a runtime through its own interface.
  {
    files: ['src/console/client/**/*.ts', 'src/console/shared/**/*.ts'],
    folder: 'console',
    may: [],
    why: 'the browser console imports only src/console',
  },
  {
    files: ['src/console/*.ts'],
    folder: 'console',
    may: ['exec', 'common', 'ivm'],
    why: 'the console plugin reads the plans views run through the engine, never the server',
  },
  // The shell and the subscriber are clients of a running server's HTTP API, like any other.
  {
    files: ['src/cli/**/*.ts'],
    folder: 'cli',
    may: [],
    why: 'sluice sql and sluice subscribe speak only the HTTP and WebSocket API',
  },
];

const NODE_SQL_PARSER = {
  group: ['node-sql-parser'],
  message: 'node-sql-parser is used only inside src/parser',
};

// Flat config replaces (does not merge) a rule's options when several blocks match a file, so each
// file gets exactly one no-restricted-imports: the layer's patterns plus the node-sql-parser one.
function layerRule({ folder, may, why }) {
  const allowed = [folder, ...may];
  const message = `${why}: src/${folder} may import only ${allowed.map((f) => `src/${f}`).join(', ')}`;
  const patterns = [
    ...FOLDERS.filter((f) => !allowed.includes(f)).map((f) => ({ group: [`**/${f}/**`], message })),
    ...ENTRY_POINTS.map((f) => ({ group: [`**/${f}`], message: `${message} (src/${f} is an entry point)` })),
  ];
  if (folder !== 'parser') patterns.push(NODE_SQL_PARSER);
  return { 'no-restricted-imports': ['error', { patterns }] };
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.test-build/**',
      'data/**',
      'test-artifacts/**',
      '.tmp/**',
      '.scratch*/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The top (src/server, src/index.ts, src/cli.ts) may import any folder.
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [NODE_SQL_PARSER] }] } },
  ...layers.map((layer) => ({
    files: layer.files,
    ...(layer.ignores ? { ignores: layer.ignores } : {}),
    rules: layerRule(layer),
  })),
);
