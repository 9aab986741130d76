// Every fenced code block of README.md and docs/*.md runs as written: one real `sluice start` server
// per document (fresh data directory, free port), its blocks in document order (a later block sees
// what an earlier one created), the output the document shows compared with what the block prints.
// Blocks marked `<!-- doc-test: skip (reason) -->` are listed with their reasons. The self-tests at
// the end prove the harness fails on a wrong output line, message, program or statement.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { removeDir, spawnServer, startServer, tempDir } from '../server/helpers.ts';
import { extractBlocks, outputMatches, shellSteps, shellWords } from './doc-blocks.ts';
import { type DocumentReport, problems, programOutput, runDocument } from './doc-run.ts';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Discovered, so a new page under docs/ is covered without touching this file.
const documents = [
  'README.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f)),
];

function summary(report: DocumentReport): string {
  return report.outcomes
    .map((o) => `${o.block.file}:${o.block.line} ${o.block.lang}: ${o.status}`)
    .join('\n');
}

// The documents run side by side (one server each), as do the self-tests: the file stays bounded.
describe('the code blocks of the documentation run as written', { concurrency: true }, () => {
  for (const file of documents) {
    test(file, async (t) => {
      const doc = extractBlocks(file, readFileSync(join(repo, file), 'utf8'));
      const runnable = doc.blocks.filter((b) => b.directive?.kind !== 'skip');
      const workDir = tempDir('sluice-doc-work-');
      let report: DocumentReport;
      if (runnable.length === 0) {
        // Nothing to run (no blocks, or only skipped ones): no server; the skips are still listed.
        report = await runDocument(doc, { port: 0 }, { repo, workDir });
      } else {
        const dataDir = tempDir('sluice-doc-test-');
        const server = await spawnServer(dataDir, [], 60_000);
        try {
          report = await runDocument(doc, { port: Number(new URL(server.base).port) }, { repo, workDir });
        } finally {
          server.child.kill('SIGTERM');
          const killer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
          await server.exited;
          clearTimeout(killer);
          removeDir(dataDir);
        }
      }
      removeDir(workDir);
      for (const o of report.outcomes) {
        if (o.status === 'skipped')
          t.diagnostic(`skipped ${o.block.file}:${o.block.line} (${o.block.lang}): ${o.detail}`);
      }
      const passed = report.outcomes.filter((o) => o.status === 'passed').length;
      t.diagnostic(`${file}: ${doc.blocks.length} blocks, ${passed} ran as written`);
      assert.deepEqual(problems(report), [], summary(report));
      assert.equal(
        report.outcomes.length,
        doc.blocks.length,
        `every block has an outcome\n${summary(report)}`,
      );
      assert.ok(
        report.outcomes.every((o) => o.status === 'passed' || o.status === 'skipped'),
        summary(report),
      );
    });
  }

  test('the README has runnable blocks and few skips', () => {
    // Guards against an extractor that finds nothing (and so passes on anything).
    const doc = extractBlocks('README.md', readFileSync(join(repo, 'README.md'), 'utf8'));
    const kinds = new Set(doc.blocks.filter((b) => b.directive === null).map((b) => b.kind));
    for (const kind of ['shell', 'js', 'ts', 'sql'] as const)
      assert.ok(kinds.has(kind), `a ${kind} block runs`);
    const skipped = doc.blocks.filter((b) => b.directive?.kind === 'skip').length;
    assert.ok(skipped * 2 < doc.blocks.length, `${skipped} of ${doc.blocks.length} blocks skipped`);
  });
});

// ---- the harness itself -----------------------------------------------------------------------------

describe('doc-block harness self-test', { concurrency: true }, () => {
  // Each synthetic document runs against its own fresh in-process server (real HTTP and WebSocket).
  const run = async (markdown: string): Promise<DocumentReport> => {
    const dataDir = tempDir('sluice-doc-self-');
    const workDir = tempDir('sluice-doc-self-work-');
    const server = await startServer({ dataDir, heartbeatMs: 200 });
    try {
      const target = { port: Number(new URL(server.base).port) };
      return await runDocument(extractBlocks('synthetic.md', markdown), target, {
        repo,
        workDir,
        timeoutMs: 15_000,
      });
    } finally {
      await server.close();
      removeDir(dataDir);
      removeDir(workDir);
    }
  };

  test('`...` in shown output matches anything, the rest exactly', () => {
    assert.ok(outputMatches(['{"epoch":2,...,"next":null}'], '{"epoch":2,"rows":[1,2],"next":null}\n'));
    assert.ok(outputMatches(['a', '...', 'c'], 'a\nb\nb\nc'));
    assert.ok(outputMatches(['{"x":[...]}'], '{"x":[]}'));
    assert.ok(!outputMatches(['{"epoch":2,...}'], '{"epoch":3,"rows":[]}'));
    assert.ok(!outputMatches(['{"accepted":2}'], '{"accepted":2}{"accepted":3}'));
    assert.ok(!outputMatches(['a.c'], 'abc'), 'regular-expression characters are literal');
  });

  test('the extractor: fences, markers, shell steps and program output', () => {
    const doc = extractBlocks(
      'x.md',
      [
        'text',
        '<!-- doc-test: skip (needs a Kafka broker) -->',
        '```sql',
        'CREATE SOURCE s ...',
        '```',
        '',
        '```sh',
        '# prose before the first command',
        'f() { echo "$1"; }',
        'curl -s localhost:8080/a \\',
        '  -d x',
        '# {"a":1}',
        '',
        '# prose after a blank line',
        'npx --yes wscat -c "ws://localhost:8080/v1/views/v/subscribe?snapshot=true" -H "x-a: b"',
        '# {"type":"subscribed",...}',
        '> {"type":"ping"}',
        '```',
        '',
        '  ```js',
        '  console.log(1);',
        '  // prints:',
        '  // 1',
        '  ```',
      ].join('\n'),
    );
    assert.deepEqual(doc.errors, []);
    assert.equal(doc.blocks.length, 3);
    const [kafka, shell, js] = doc.blocks;
    assert.deepEqual(kafka?.directive, { kind: 'skip', reason: 'needs a Kafka broker' });
    assert.equal(kafka?.line, 3);
    const { steps, errors } = shellSteps(shell as NonNullable<typeof shell>);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      steps.map((s) => ({
        line: s.line,
        command: s.command,
        expected: s.expected,
        wscat: s.wscat,
        actions: s.actions.length,
      })),
      [
        {
          line: 9,
          command: ['f() { echo "$1"; }', 'curl -s localhost:8080/a \\', '  -d x'],
          expected: ['{"a":1}'],
          wscat: null,
          actions: 1,
        },
        {
          line: 15,
          command: [
            'npx --yes wscat -c "ws://localhost:8080/v1/views/v/subscribe?snapshot=true" -H "x-a: b"',
          ],
          expected: ['{"type":"subscribed",...}'],
          wscat: { url: 'ws://localhost:8080/v1/views/v/subscribe?snapshot=true', headers: { 'x-a': 'b' } },
          actions: 2,
        },
      ],
    );
    assert.deepEqual(steps[1]?.actions[1], { kind: 'send', text: '{"type":"ping"}' });
    assert.deepEqual(js?.body, ['console.log(1);', '// prints:', '// 1']);
    assert.deepEqual(programOutput(js?.body ?? []), ['1']);
    assert.deepEqual(shellWords(`a 'b c' "d \\"e\\"" f\\ g # h`), ['a', 'b c', 'd "e"', 'f g']);
  });

  test('the markdown itself: a skip needs a reason, an unrunnable block a marker, npx wscat --yes', () => {
    const doc = extractBlocks(
      'x.md',
      [
        '<!-- doc-test: skip -->',
        '```sh',
        'true',
        '```',
        '```text',
        'a grammar',
        '```',
        '<!-- doc-test: skip (why) -->',
        'a paragraph, not a fence',
        '<!-- doc-test: sometimes -->',
        '```sql',
        'SELECT 1',
        '```',
      ].join('\n'),
    );
    assert.deepEqual(doc.errors, [
      'x.md:1: a skip needs its reason in parentheses: <!-- doc-test: skip (why) -->',
      'x.md:5: a `text` block cannot run; mark it <!-- doc-test: skip (why) --> or give it a runnable language (sh, js, ts, sql)',
      'x.md:8: a doc-test marker must come right before a code fence',
      'x.md:10: unknown doc-test marker "sometimes" (known: "skip (reason)", "subscriber output")',
    ]);
    const wscat = extractBlocks('y.md', "```sh\nnpx wscat -c 'ws://localhost:8080/x'\n```");
    assert.deepEqual(shellSteps(wscat.blocks[0] as NonNullable<(typeof wscat.blocks)[0]>).errors, [
      'y.md:2: `npx wscat` asks before installing wscat: write `npx --yes wscat`',
    ]);
  });

  // One document exercising every kind of block, right; the tests below make each kind wrong in one place.
  const GOOD = [
    '```sql',
    'CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL);',
    'CREATE MATERIALIZED VIEW s AS SELECT k % 2 AS parity, SUM(v) AS total FROM t GROUP BY k % 2',
    '```',
    '',
    '```sh',
    "npx --yes wscat -c 'ws://localhost:8080/v1/views/s/subscribe?snapshot=true'",
    '# {"type":"subscribed","view":"s","epoch":0,...}',
    '# {"type":"snapshot","epoch":0,"clock":"1970-01-01 00:00:00+00","rows":[],"more":false}',
    '# {"type":"snapshot_end","epoch":0,"rows":0}',
    '```',
    '',
    '```sh',
    `curl -s localhost:8080/v1/tables/t/rows -H 'content-type: application/json' -d '[{"k": 1, "v": 5}]'`,
    '# {"accepted":1,"epoch":1}',
    "curl -s 'localhost:8080/v1/views/s/rows'",
    '# {"epoch":1,...,"rows":[{"parity":1,"total":5}],...}',
    '```',
    '',
    '<!-- doc-test: subscriber output -->',
    '```',
    '{"type":"changes","epoch":1,...,"changes":[{"op":"+I","row":{"parity":1,"total":5}}]}',
    '{"type":"progress","epoch":1}',
    '```',
    '',
    '```js',
    "const r = await fetch('http://localhost:8080/v1/views/s/rows');",
    'console.log((await r.json()).rows);',
    '// prints:',
    '// [ { parity: 1, total: 5 } ]',
    '```',
  ];
  const variant = (edit: (line: string) => string): string => GOOD.map(edit).join('\n');

  test('a document that shows the right output passes', async () => {
    const report = await run(variant((l) => l));
    assert.deepEqual(problems(report), [], summary(report));
    assert.deepEqual(
      report.outcomes.map((o) => o.status),
      ['passed', 'passed', 'passed', 'passed', 'passed'],
    );
  });

  test('a wrong output line after a curl fails, naming its line', async () => {
    const report = await run(
      variant((l) => l.replace('{"accepted":1,"epoch":1}', '{"accepted":1,"epoch":2}')),
    );
    const found = problems(report);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0] ?? '', /^synthetic\.md:14: the output differs from the one shown/);
    assert.match(found[0] ?? '', /"epoch":2/);
    assert.deepEqual(
      report.outcomes.map((o) => o.status),
      ['passed', 'passed', 'failed', 'not run', 'not run'],
    );
  });

  test('a wrong WebSocket message fails', async () => {
    const report = await run(variant((l) => l.replace('"op":"+I"', '"op":"-D"')));
    const found = problems(report);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0] ?? '', /^synthetic\.md:22: expected the message/);
  });

  test('a wrong printed value of a program fails', async () => {
    const report = await run(variant((l) => l.replace('total: 5 }', 'total: 6 }')));
    const found = problems(report);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0] ?? '', /^synthetic\.md:26: the program printed other output than shown/);
  });

  test('a failing statement and a failing command fail', async () => {
    const sqlReport = await run(variant((l) => l.replace('SUM(v)', 'SUM(w)')));
    assert.match(problems(sqlReport)[0] ?? '', /^synthetic\.md:1: POST \/v1\/sql answered 400/);
    // No output shown, but curl cannot connect: the exit status fails the step.
    const shReport = await run('```sh\ncurl -s http://127.0.0.1:1/nothing\necho never\n```');
    assert.match(problems(shReport)[0] ?? '', /^synthetic\.md:2: the command exited with status 7/);
  });
});
