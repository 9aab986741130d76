// The interactive shell on a (simulated) terminal against a real server: node:readline's line
// editing with the history of an earlier session loaded from the history file, continuation prompts
// for a multi-line statement, Ctrl-C clearing the statement being typed, \q, and the history saved
// bounded and private.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { ApiClient } from '../../src/cli/api-client.ts';
import { HISTORY_SIZE, historyPath, loadHistory, saveHistory } from '../../src/cli/history.ts';
import { SqlShell } from '../../src/cli/sql-shell.ts';
import { type TestServer, removeDir, request, startServer, tempDir, waitUntil } from '../server/helpers.ts';

let server: TestServer;
const dir = tempDir('sluice-cli-tty-');

before(async () => {
  server = await startServer();
});
after(async () => {
  await server.close();
  removeDir(dir);
});

const UP = '\u001b[A';
const CTRL_C = '\u0003';

/** What the terminal shows, without readline's cursor movements and line clearing. */
function plain(text: string): string {
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

test(
  'a terminal session: history from an earlier session, multi-line, Ctrl-C, \\q',
  { timeout: 60_000 },
  async () => {
    const file = join(dir, 'history');
    writeFileSync(file, 'SELECT 41 AS old;\n');
    const input = new PassThrough();
    const output = new PassThrough();
    const errors = new PassThrough();
    let out = '';
    let err = '';
    output.on('data', (d: Buffer) => (out += d.toString()));
    errors.on('data', (d: Buffer) => (err += d.toString()));
    const shell = new SqlShell({ client: new ApiClient(server.base), streams: { input, output, errors } });
    const done = shell.interactive(file, true);
    const type = async (keys: string, expect: string): Promise<void> => {
      input.write(keys);
      await waitUntil(
        () => plain(out).includes(expect),
        20_000,
        `"${expect}" on the terminal:\n${plain(out)}\n${err}`,
      );
    };

    await waitUntil(() => out.includes('sluice=> '), 20_000, 'the first prompt');
    await type('CREATE TABLE h (a INTEGER);\r', 'CREATE TABLE h\n');
    await type('INSERT INTO h\r', 'sluice-> ');
    await type("VALUES (1), ('x\r", "sluice'> ");
    // Ctrl-C drops the unfinished statement: the next one runs alone (else it would be a syntax error).
    await type(CTRL_C, '^C\n');
    await type('INSERT INTO h VALUES (2);\r', 'INSERT h: 1 row, epoch 1\n');
    // Five lines up (this session typed four) is the earlier session's last line.
    await type(`${UP}${UP}${UP}${UP}${UP}\r`, ' old\n-----\n  41\n(1 row, epoch 1)\n');
    input.write('\\q\r');
    assert.equal(await done, 0);
    assert.equal(err, '');
    const rows = await request(server.base, 'POST', '/v1/sql', { sql: 'SELECT a FROM h' });
    assert.deepEqual(rows.body.results, [
      {
        statement: 'SELECT',
        columns: [{ name: 'a', type: 'integer', nullable: true }],
        rows: [{ a: 2 }],
        epoch: 1,
      },
    ]);

    // The history holds both sessions, oldest first (a recalled line moves to the end), and only
    // its owner may read it.
    const saved = readFileSync(file, 'utf8').split('\n');
    assert.deepEqual(saved, [
      'CREATE TABLE h (a INTEGER);',
      'INSERT INTO h',
      "VALUES (1), ('x",
      'INSERT INTO h VALUES (2);',
      'SELECT 41 AS old;',
      '\\q',
      '',
    ]);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  },
);

test('the history is bounded when saved and when read back, and its file can be chosen', () => {
  const file = join(dir, 'bounded');
  const entries = Array.from({ length: HISTORY_SIZE + 500 }, (_, i) => `SELECT ${i};`).reverse(); // newest first
  saveHistory(file, entries);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, HISTORY_SIZE);
  assert.equal(lines.at(-1), `SELECT ${HISTORY_SIZE + 499};`, 'the newest entries are kept');
  // A history file grown elsewhere beyond any bound is read from its end only.
  writeFileSync(file, 'x'.repeat(3 * 1024 * 1024) + '\nSELECT last;\n');
  assert.deepEqual(loadHistory(file), ['SELECT last;']);
  assert.deepEqual(loadHistory(join(dir, 'missing')), []);
  assert.equal(historyPath({ SLUICE_HISTORY: '/tmp/h' }), '/tmp/h');
  assert.equal(historyPath({ SLUICE_HISTORY: '' }), null);
  assert.equal(historyPath({}), join(homedir(), '.sluice_history'));
});
