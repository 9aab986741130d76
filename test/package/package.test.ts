// The published package as a user gets it: `npm pack` (which builds dist/ through `prepare`), the
// tarball unpacked into a fresh project, then plain `node` (no tsx) imports the library, runs the
// installed `sluice` bin and its server with the web console, and `tsc` type-checks a strict
// NodeNext consumer against the shipped .d.ts. Slow by nature (a full tsc build; about a minute).
//
// Installing: the tarball is unpacked into node_modules/sluice and its bin linked into
// node_modules/.bin, as npm does, but its declared dependencies are symlinks to this repository's
// installed copies instead of a registry install (minutes on a cold cache, and network in a test).
// Only the packed package.json's `dependencies` are linked, so an import of an undeclared package
// (tsx, a dev dependency) or of a file outside `files` fails here as it would for a user.
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
const consumer = join(work, 'consumer');
const installed = join(consumer, 'node_modules', 'sluice');
// Children run plain node: nothing inherited may register tsx or another loader.
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_OPTIONS: '',
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
};
const LONG = 300_000; // a loaded machine: generous bounds, never timing assertions

function run(command: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: LONG, maxBuffer: 64 << 20 });
  assert.equal(
    r.status,
    0,
    `${command} ${args.join(' ')} (in ${cwd}) exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`,
  );
  return r;
}

let tarball = '';
let entries: string[] = [];

before(() => {
  // npm_execpath is npm's own CLI under `npm test`; otherwise the npm on PATH.
  const npm = process.env.npm_execpath;
  const packArgs = ['pack', '--pack-destination', work, '--no-fund', '--no-audit'];
  if (npm !== undefined && npm.endsWith('.js')) run(process.execPath, [npm, ...packArgs], repo);
  else run('npm', packArgs, repo);
  const packed = readdirSync(work).filter((f) => f.endsWith('.tgz'));
  assert.equal(packed.length, 1, `one tarball expected, found ${packed.join(', ')}`);
  tarball = join(work, packed[0] as string);
  entries = run('tar', ['tzf', tarball], work)
    .stdout.split('\n')
    .filter((e) => e !== '');

  // Install: the tarball's package/ is node_modules/sluice; declared dependencies and @types/node
  // (what a TypeScript consumer on Node has) link to the repository's copies; bins as npm links them.
  mkdirSync(installed, { recursive: true });
  run('tar', ['xzf', tarball, '-C', installed, '--strip-components=1'], work);
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    bin?: Record<string, string>;
  };
  for (const dep of [...Object.keys(manifest.dependencies ?? {}), '@types/node']) {
    const link = join(consumer, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(realpathSync(join(repo, 'node_modules', dep)), link, 'dir');
  }
  mkdirSync(join(consumer, 'node_modules', '.bin'), { recursive: true });
  for (const [name, path] of Object.entries(manifest.bin ?? {})) {
    symlinkSync(join('..', 'sluice', path), join(consumer, 'node_modules', '.bin', name));
  }
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { sluice: tarball } }),
  );
});

after(() => rmSync(work, { recursive: true, force: true }));

test('the tarball holds the build, the bin and the docs, and no sources, tests or benches', () => {
  for (const e of entries) assert.match(e, /^package\//, e);
  const files = entries.map((e) => e.slice('package/'.length));
  for (const needed of [
    'package.json',
    'README.md',
    'bin/sluice.mjs',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/index.js.map',
    'dist/cli.js',
    'dist/console/assets/index.html',
    'dist/console/client/main.ts',
  ]) {
    assert.ok(files.includes(needed), `${needed} missing from the tarball`);
  }
  const unwanted = files.filter(
    (f) =>
      /^(src|test|bench|scripts|tools|\.ci)\//.test(f) ||
      /\.test\.(ts|js|d\.ts)$/.test(f) ||
      /(^|\/)(test|tests|__tests__)\//.test(f) ||
      /^tsconfig/.test(f),
  );
  assert.deepEqual(unwanted, []);
});

test('prepare, if an install runs it from the tarball, skips the build it cannot do', () => {
  // npm runs a non-registry dependency's prepare once its install scripts are approved; without
  // src/ (and the dev dependencies) there is nothing to build, and the install must not fail.
  const npm = process.env.npm_execpath;
  const args = ['run', 'prepare'];
  if (npm !== undefined && npm.endsWith('.js')) run(process.execPath, [npm, ...args], installed);
  else run('npm', args, installed);
});

test('plain node imports { Engine } and maintains a view', () => {
  writeFileSync(
    join(consumer, 'app.mjs'),
    `import { Engine } from 'sluice';
const engine = new Engine();
engine.execute(\`
  CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
  CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
\`);
engine.execute('INSERT INTO orders VALUES (1, 11, 5), (2, 11, 16), (3, 12, 40)');
engine.execute('DELETE FROM orders WHERE order_id = 2');
const [select] = engine.execute('SELECT seller_id, total FROM seller_totals ORDER BY seller_id');
console.log(JSON.stringify({ rows: select.rows, snapshot: engine.viewSnapshot('seller_totals').rows }));
`,
  );
  const r = run(process.execPath, ['app.mjs'], consumer);
  const out = JSON.parse(r.stdout) as { rows: unknown; snapshot: unknown[] };
  const expected = [
    { seller_id: 11, total: 5 },
    { seller_id: 12, total: 40 },
  ];
  assert.deepEqual(out.rows, expected);
  assert.deepEqual(
    [...out.snapshot].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    expected,
  );
});

test('a CommonJS consumer (the default type of npm init) requires it on Node 20.19+', () => {
  // Node loads an ES module with require() from 20.19 (the engines floor); without a condition
  // other than "import" in exports, require('sluice') failed with 'No "exports" main defined'.
  writeFileSync(
    join(consumer, 'app.cjs'),
    `const { Engine } = require('sluice');
const engine = new Engine();
engine.execute('CREATE TABLE t (x INT PRIMARY KEY); CREATE MATERIALIZED VIEW n AS SELECT COUNT(*) AS c FROM t');
engine.applyChanges('t', { insert: [{ x: 1 }, { x: 2 }] });
console.log(JSON.stringify(engine.viewSnapshot('n').rows));
`,
  );
  const r = run(process.execPath, ['app.cjs'], consumer);
  assert.equal(r.stdout.trim(), '[{"c":2}]');
});

test('the installed bin answers --help and --version', () => {
  const bin = join(consumer, 'node_modules', '.bin', 'sluice');
  accessSync(bin, constants.X_OK);
  const help = run(bin, ['--help'], consumer);
  assert.match(help.stdout, /Usage: sluice start/);
  const version = run(bin, ['--version'], consumer);
  const { version: packed } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    version: string;
  };
  assert.equal(version.stdout.trim(), `sluice ${packed}`);
});

test('the installed server starts and serves the web console from dist', async () => {
  const bin = join(consumer, 'node_modules', '.bin', 'sluice');
  const child = spawn(
    bin,
    ['start', '--port', '0', '--data-dir', join(work, 'data'), '--log-level', 'warn'],
    {
      cwd: consumer,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  try {
    const base = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no listening line within 120 s:\n${output}`)), 120_000);
      const look = (): void => {
        const m = /listening on (http:\/\/[^\s]+)/.exec(output);
        if (m !== null) {
          clearTimeout(timer);
          res(m[1] as string);
        }
      };
      child.stdout.on('data', look);
      void exited.then((code) => rej(new Error(`the server exited (${code}):\n${output}`)));
    });
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
    // The browser client is bundled by esbuild from dist/console/client on first request.
    const script = await fetch(`${base}/console/console.js`);
    assert.equal(script.status, 200, await script.clone().text());
    assert.ok((await script.text()).length > 1000);
    const sql = await fetch(`${base}/v1/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'CREATE TABLE t (a INT NOT NULL)' }),
    });
    assert.equal(sql.status, 200, await sql.clone().text());
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
});

test('a strict NodeNext TypeScript consumer type-checks against the shipped declarations', () => {
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      files: ['index.ts'],
    }),
  );
  writeFileSync(
    join(consumer, 'index.ts'),
    `import { Engine, SluiceError, type Row, type StatementResult } from 'sluice';

const engine = new Engine();
const results: StatementResult[] = engine.execute('CREATE TABLE t (a INT NOT NULL)');
const rows: readonly Row[] = engine.tableRows('t');
// @ts-expect-error: the declarations are real types, not any (execute takes SQL text)
engine.execute(42);
try {
  engine.execute('SELECT nope FROM t');
} catch (err) {
  if (err instanceof SluiceError) console.log(err.code, err.message, results.length, rows.length);
}
`,
  );
  run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer], consumer);
});
