// The CLI against a server that answers with hostile or broken text: names, values and error
// messages holding terminal escape sequences (ESC [ …, OSC 52 clipboard writes, C1 CSI, bidi
// overrides) print escaped, never raw; a body that never ends, a WebSocket message past the
// client's bound and messages not shaped as the API's end in a clear error and a non-zero exit,
// with the bytes read bounded and no reconnect loop. The server here is a stub speaking just enough
// of the API; nothing in the CLI can tell it from a real one.
import assert from 'node:assert/strict';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiClient, ClientError } from '../../src/cli/api-client.ts';
import { Subscriber } from '../../src/cli/subscribe.ts';
import { runCli } from './helpers.ts';

// Raw sequences a terminal would act on: colour, clear screen, a clipboard write, carriage return,
// a one-character C1 CSI, a right-to-left override.
const ESC_COLOUR = '\u001b[31m';
const OSC_52 = '\u001b]52;c;aGk=\u0007';
const HOSTILE = `${ESC_COLOUR}red${OSC_52}\rover\u009b2J\u202eevil`;
/** Any character a terminal interprets that the CLI must have escaped. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.writeHead(404).end();
const server = createServer((req, res) => handler(req, res));
const wss = new WebSocketServer({ server });
let onSocket: (socket: WebSocket) => void = (socket) => socket.close(4404);
let connections = 0;
wss.on('connection', (socket) => {
  connections++;
  onSocket(socket);
});
let base = '';

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const client of wss.clients) client.terminate();
  await new Promise((resolve) => wss.close(resolve));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function assertEscaped(text: string, what: string): void {
  assert.doesNotMatch(text, RAW_CONTROL, `${what} holds a raw control character: ${JSON.stringify(text)}`);
}

test('\\d prints a table key and the views reading it escaped', { timeout: 60_000 }, async () => {
  handler = (req, res) => {
    if (req.url === '/v1/tables/t')
      json(res, 200, {
        name: 't',
        columns: [{ name: 'k', type: 'bigint', nullable: false }],
        key: [`k${ESC_COLOUR}`],
        dependents: [`v${OSC_52}`, `w\r\u202e`],
        rowCount: 0,
      });
    else json(res, 404, { error: { code: 'UNKNOWN_TABLE', message: 'no' } });
  };
  const run = await runCli(['sql', '--url', base, '-c', '\\d t']);
  assert.equal(run.code, 0, run.stderr);
  assertEscaped(run.stdout, '\\d output');
  assert.match(run.stdout, /Primary key: k\\x1b\[31m/);
  assert.match(run.stdout, /Read by: v\\x1b\]52;c;aGk=\\x07, w\\r\\u202e/);
});

test('a result whose epoch and row count are not numbers prints neither', { timeout: 60_000 }, async () => {
  handler = (_req, res) =>
    json(res, 200, {
      results: [
        { statement: 'INSERT', object: 't', rowCount: HOSTILE, epoch: OSC_52 },
        {
          statement: 'SELECT',
          columns: [{ name: 'a', type: 'text' }],
          rows: [{ a: HOSTILE }],
          epoch: OSC_52,
        },
      ],
    });
  const run = await runCli(['sql', '--url', base, '-c', 'SELECT 1']);
  assert.equal(run.code, 0, run.stderr);
  assertEscaped(run.stdout, 'sql output');
  assert.match(run.stdout, /^INSERT t$/m);
  assert.match(run.stdout, /^\(1 row\)$/m);
});

test(
  'sluice token prints the server error, its hint and a created token escaped',
  { timeout: 60_000 },
  async () => {
    handler = (_req, res) =>
      json(res, 403, { error: { code: `FORBIDDEN${ESC_COLOUR}`, message: HOSTILE, hint: OSC_52 } });
    const refused = await runCli(['token', 'create', '--role', 'reader', '--url', base]);
    assert.equal(refused.code, 1);
    assertEscaped(refused.stderr, 'token error');
    assert.match(
      refused.stderr,
      /FORBIDDEN\\x1b\[31m: \\x1b\[31mred\\x1b\]52;c;aGk=\\x07\\rover\\x9b2J\\u202eevil/,
    );
    assert.match(refused.stderr, /hint: \\x1b\]52;c;aGk=\\x07/);

    handler = (_req, res) =>
      json(res, 200, { id: `id${OSC_52}`, role: 'reader', tenant: HOSTILE, token: `tok${ESC_COLOUR}` });
    const created = await runCli(['token', 'create', '--role', 'reader', '--url', base]);
    assert.equal(created.code, 0, created.stderr);
    assertEscaped(created.stdout + created.stderr, 'token create output');
  },
);

test('an answer body that never ends is abandoned at the client bound', { timeout: 60_000 }, async () => {
  const bound = 1024 * 1024;
  let sent = 0;
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    // Up to 32 MiB (a bound for the test itself): the client must stop reading long before.
    const pump = (): void => {
      while (sent < 32 * bound && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
  const client = new ApiClient(base, null, bound);
  await assert.rejects(client.sql('SELECT 1'), (error: unknown) => {
    assert.ok(error instanceof ClientError, String(error));
    assert.match(error.message, /sent an answer larger than 1048576 bytes/);
    return true;
  });
  // What was written before the client hung up: its bound plus what sockets buffer, not 32 MiB.
  assert.ok(sent <= 8 * bound, `the server wrote ${sent} bytes before the client stopped`);
});

/** A writable collecting what is written to it as text. */
function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

function subscriber(format: 'table' | 'json', maxMessageBytes?: number) {
  const output = collector();
  const errors = collector();
  const sub = new Subscriber({
    client: new ApiClient(base),
    view: `v${ESC_COLOUR}`,
    snapshot: true,
    resumeFrom: null,
    format,
    output: output.stream,
    errors: errors.stream,
    retryMs: 10,
    maxRetryMs: 20,
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
  return { sub, output, errors };
}

test('subscribe: messages not shaped as the API are skipped, never thrown', { timeout: 30_000 }, async () => {
  onSocket = (socket) => {
    socket.send(
      JSON.stringify({ type: 'subscribed', epoch: 1, columns: [null, 7, { name: 'a', type: 'text' }] }),
    );
    socket.send(JSON.stringify({ type: 'snapshot', epoch: 1, rows: [null, { a: HOSTILE }] }));
    socket.send(JSON.stringify({ type: 'snapshot_end', epoch: 1 }));
    socket.send(
      JSON.stringify({
        type: 'changes',
        epoch: 2,
        changes: [null, 5, 'x', { op: '+I', row: { a: 'b' } }],
        errors: [null],
      }),
    );
    socket.close(4404);
  };
  const { sub, output, errors } = subscriber('table');
  assert.equal(await sub.run(), 1);
  assertEscaped(output.text() + errors.text(), 'subscribe output');
  assert.match(output.text(), /\\x1b\[31mred/);
  assert.match(output.text(), /\| \+I \| b$/m);

  onSocket = (socket) => socket.send(JSON.stringify([1, 2]));
  const second = subscriber('table');
  assert.equal(await second.sub.run(), 1);
  assert.match(
    second.errors.text(),
    /cannot subscribe to "v\\x1b\[31m": a message that is not a JSON object/,
  );

  // Garbage after a working subscription would come again on resuming: it ends the run too.
  connections = 0;
  onSocket = (socket) => {
    socket.send(JSON.stringify({ type: 'subscribed', epoch: 1, columns: [{ name: 'a', type: 'text' }] }));
    socket.send(`<html>${ESC_COLOUR}garbage`);
  };
  const third = subscriber('table');
  assert.equal(await third.sub.run(), 1);
  assert.equal(connections, 1);
  assert.match(third.errors.text(), /: a message that is not JSON$/m);
});

test(
  'subscribe --format json escapes C1 controls and bidi overrides as JSON \\u escapes',
  { timeout: 30_000 },
  async () => {
    onSocket = (socket) => {
      socket.send(JSON.stringify({ type: 'subscribed', epoch: 1, columns: [{ name: 'a', type: 'text' }] }));
      socket.send(
        JSON.stringify({ type: 'changes', epoch: 2, changes: [{ op: '+I', row: { a: HOSTILE } }] }),
      );
      socket.close(4404);
    };
    const { sub, output } = subscriber('json');
    assert.equal(await sub.run(), 1);
    const line = output.text().trim();
    assertEscaped(line, 'JSON line');
    assert.deepEqual(JSON.parse(line), { epoch: 2, op: '+I', row: { a: HOSTILE } });
  },
);

test(
  'subscribe: a message past the client bound ends the run, no reconnect loop',
  { timeout: 30_000 },
  async () => {
    connections = 0;
    onSocket = (socket) => {
      socket.send(JSON.stringify({ type: 'subscribed', epoch: 1, columns: [{ name: 'a', type: 'text' }] }));
      socket.send(
        JSON.stringify({
          type: 'changes',
          epoch: 2,
          changes: [{ op: '+I', row: { a: 'x'.repeat(300_000) } }],
        }),
      );
    };
    const { sub, errors } = subscriber('table', 100_000);
    const done = sub.run();
    const outcome = await Promise.race([
      done,
      new Promise<'looping'>((r) => setTimeout(() => r('looping'), 5_000)),
    ]);
    sub.stop();
    await done;
    assert.equal(outcome, 1, `still reconnecting after 5 s (${connections} connections): ${errors.text()}`);
    assert.equal(connections, 1);
    assert.match(errors.text(), /a message larger than 100000 bytes/);
  },
);

test('one very wide value does not pad every other row to its width', { timeout: 60_000 }, async () => {
  const wide = 'w'.repeat(200_000);
  const rows = [{ a: wide }, ...Array.from({ length: 200 }, (_, i) => ({ a: `r${i}` }))];
  handler = (_req, res) =>
    json(res, 200, {
      results: [{ statement: 'SELECT', columns: [{ name: 'a', type: 'text' }], rows, epoch: 1 }],
    });
  const run = await runCli(['sql', '--url', base, '-c', 'SELECT a FROM t']);
  assert.equal(run.code, 0, run.stderr);
  // The wide value once, the others padded to the alignment bound at most (base: 200 × 200 kB).
  assert.ok(run.stdout.length < wide.length + 200 * 300, `${run.stdout.length} characters printed`);
  assert.match(run.stdout, /^ r199$/m);

  onSocket = (socket) => {
    socket.send(JSON.stringify({ type: 'subscribed', epoch: 1, columns: [{ name: 'a', type: 'text' }] }));
    socket.send(
      JSON.stringify({ type: 'changes', epoch: 2, changes: rows.map((row) => ({ op: '+I', row })) }),
    );
    socket.close(4404);
  };
  const { sub, output } = subscriber('table');
  assert.equal(await sub.run(), 1);
  assert.ok(output.text().length < wide.length + 200 * 300, `${output.text().length} characters printed`);
});

test(
  '--timeout gives up on a server that never answers, or stalls mid-body, with a clear error',
  { timeout: 60_000 },
  async () => {
    const held: ServerResponse[] = [];
    handler = (_req, res) => void held.push(res); // headers never sent
    const silent = await runCli(['sql', '--url', base, '--timeout', '0.5', '-c', 'SELECT 1']);
    assert.equal(silent.code, 1, silent.stderr);
    assert.match(silent.stderr, /did not answer within 0\.5 s \(--timeout\)/);

    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{"results": [');
      held.push(res); // the body starts and never ends
    };
    const stalled = await runCli(['token', 'list', '--url', base, '--timeout', '0.5']);
    assert.equal(stalled.code, 1, stalled.stderr);
    assert.match(stalled.stderr, /did not answer within 0\.5 s \(--timeout\)/);
    for (const res of held) res.destroy();

    const refused = await runCli(['sql', '--url', base, '--timeout', 'soon', '-c', 'SELECT 1']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--timeout must be a number of seconds \(0 = no limit\), not "soon"/);
  },
);
