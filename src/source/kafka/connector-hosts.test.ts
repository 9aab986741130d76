// The connector-host allow-list, as pure rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectorHosts, parseConnectorHosts } from './connector-hosts.ts';

test('the default allows loopback and the hosts of the connectors present at start', () => {
  const hosts = ConnectorHosts.create(null, ['Kafka1.example:9092', '[fd00::7]:9093']);
  for (const [host, port] of [
    ['localhost', 9092],
    ['127.0.0.1', 1],
    ['127.3.4.5', 9092],
    ['::1', 9092],
    ['0:0:0:0:0:0:0:1', 9092],
    ['kafka1.example', 19092],
    ['KAFKA1.EXAMPLE.', 9092],
    ['fd00:0::7', 9093],
  ] as const) {
    assert.ok(hosts.allows(host, port), `${host}:${port}`);
  }
  for (const [host, port] of [
    ['10.0.0.1', 9092],
    ['169.254.169.254', 80],
    ['192.168.1.1', 9092],
    ['kafka2.example', 9092],
    ['metadata.google.internal', 80],
    ['fd00::8', 9093],
    ['0x7f000001', 9092], // not an address spelling we accept: a name, and not listed
  ] as const) {
    assert.ok(!hosts.allows(host, port), `${host}:${port}`);
  }
  assert.equal(hosts.refused(['127.0.0.1:9092', '10.1.1.1:9092']), '10.1.1.1:9092');
  assert.equal(hosts.refused(['localhost:9092', 'kafka1.example:9092']), null);
});

test('--connector-hosts: names (any port or one), addresses, blocks, IPv6, *', () => {
  const hosts = ConnectorHosts.create(
    ['kafka.internal:9092', '10.0.0.0/8', '[fd00::1]:9092', 'fe80::/10'],
    [],
  );
  assert.ok(hosts.allows('kafka.internal', 9092));
  assert.ok(!hosts.allows('kafka.internal', 9093));
  assert.ok(hosts.allows('10.255.0.1', 1));
  assert.ok(hosts.allows('::ffff:10.1.2.3', 9092), 'an IPv4-mapped address matches its IPv4 block');
  assert.ok(!hosts.allows('11.0.0.1', 9092));
  assert.ok(hosts.allows('fd00::1', 9092));
  assert.ok(hosts.allows('fe80::1234', 9092));
  assert.ok(!hosts.allows('127.0.0.1', 9092), 'an explicit list replaces the default');
  assert.ok(ConnectorHosts.create(['*'], []).allows('169.254.169.254', 80));
  for (const bad of ['', 'a b', '10.0.0.0/33', 'host:0', 'host:99999', 'http://x']) {
    assert.throws(() => parseConnectorHosts([bad]), /invalid/, bad);
  }
});
