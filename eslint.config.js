// Lint: typescript-eslint's recommended rules plus the architecture's import direction —
// planner never imports exec; operators never import the planner; connectors never import exec
// or planner; parser library types stay inside src/parser.
import tseslint from 'typescript-eslint';

const restrict = (patterns) => ({
  'no-restricted-imports': [
    'error',
    { patterns: patterns.map((p) => ({ group: [p.group], message: p.message })) },
  ],
});

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
  {
    files: ['src/planner/**/*.ts'],
    rules: restrict([{ group: '**/exec/**', message: 'the planner never imports the runtime (src/exec)' }]),
  },
  {
    files: ['src/ivm/ops/**/*.ts'],
    rules: restrict([
      { group: '**/planner/**', message: 'operators never import the planner' },
      { group: '**/exec/**', message: 'operators never import the runtime' },
    ]),
  },
  {
    files: ['src/source/**/*.ts', 'src/sink/**/*.ts'],
    rules: restrict([
      { group: '**/planner/**', message: 'connectors know deltas, never plans' },
      { group: '**/exec/engine*', message: 'connectors never import the engine' },
    ]),
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/parser/**'],
    rules: restrict([
      { group: 'node-sql-parser', message: 'node-sql-parser is used only inside src/parser' },
    ]),
  },
);
