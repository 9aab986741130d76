// The consumer groups a dropped source or sink leaves in the cluster (real broker). A source reports
// its progress to a group of the server's own (`sluice-<instance>-<source>-<n>`), a sink commits its
// progress to `sluice-<instance>-sink-<sink>-<n>-progress`: each holds committed offsets, so the
// broker keeps it — listed to every client, with a lag growing as its topic does — for its offsets
// retention (7 days by default) after the connector is gone. DDL churn left one per DROP. A dropped
// connector's own group is now deleted; a group the user named in `group_id` is left to them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir } from '../server/helpers.ts';

async function groupIds(fx: { kafka: Parameters<typeof admin>[0] }): Promise<string[]> {
  return (await admin(fx.kafka, (a) => a.listGroups())).groups.map((g) => g.groupId);
}

describe(
  'Kafka consumer groups of dropped connectors (real broker)',
  kafkaSuite('Kafka connector groups'),
  () => {
    const fx = kafkaSuiteFixture('sluice-connector-groups-test');

    it("a dropped source's and sink's own groups are deleted; a group named in group_id is kept", async () => {
      const topic = uniqueName('groups-in');
      const out = uniqueName('groups-out');
      const userGroup = uniqueName('user-readers');
      await createTopic(fx.kafka, topic, 2);
      await createTopic(fx.kafka, out, 1);
      await fx.producer.send({
        topic,
        messages: [1, 2, 3, 4].map((id) => ({ value: JSON.stringify({ id }) })),
      });
      const dir = tempDir('sluice-kafka-');
      fx.dirs.push(dir);
      const s = await startServer({ dataDir: dir });
      fx.servers.push(s);
      // Names of this run only: the broker is shared, and other runs' groups may still be listed.
      const tag = Math.random().toString(36).slice(2, 8);
      const [source, sink] = [`churned_${tag}`, `churned_out_${tag}`];
      const kafka = `brokers '${fx.brokers}', topic '${topic}'`;
      await sqlOk(
        s.base,
        `CREATE SOURCE ${source} (id bigint) FROM KAFKA (${kafka});
       CREATE SOURCE named (id bigint) FROM KAFKA (${kafka}, group_id '${userGroup}');
       CREATE MATERIALIZED VIEW churned_count AS SELECT count(*) AS n FROM ${source};
       CREATE SINK ${sink} FROM churned_count INTO KAFKA (brokers '${fx.brokers}', topic '${out}', format 'changelog');`,
      );
      // Each connector's progress reaches its group: the groups exist in the cluster with offsets.
      const own = await waitFor(
        async () => {
          const epoch = (await request(s.base, 'GET', `/v1/sinks/${sink}`)).body.epoch;
          const ids = await groupIds(fx);
          const sourceGroup = ids.find((g) => new RegExp(`-${source}-\\d+$`).test(g));
          const sinkGroup = ids.find((g) => new RegExp(`-sink-${sink}-\\d+-progress$`).test(g));
          const all = epoch !== null && sourceGroup !== undefined && sinkGroup !== undefined;
          return all && ids.includes(userGroup) ? { source: sourceGroup, sink: sinkGroup } : undefined;
        },
        { what: "the connectors' progress groups" },
      );

      await sqlOk(
        s.base,
        `DROP SINK ${sink}; DROP MATERIALIZED VIEW churned_count; DROP SOURCE ${source}; DROP SOURCE named`,
      );
      const left = await waitFor(
        async () => {
          const ids = await groupIds(fx);
          return ids.includes(own.source) || ids.includes(own.sink) ? undefined : ids;
        },
        { what: "the dropped connectors' own groups to be deleted", timeoutMs: 30_000 },
      );
      assert.ok(left.includes(userGroup), 'the group named in group_id is the user’s: kept');
      // A reading attempt's own group (`…-r<8 hex>`) holds no offsets: the broker removes it by itself
      // once it is empty, at its next offsets clean-up (offsets.retention.check.interval.ms, 10 min).
      const instance = own.source.slice(0, own.source.indexOf('-', 'sluice-'.length) + 1);
      assert.deepEqual(
        left.filter((g) => g.startsWith(instance) && !/-r[0-9a-f]{8}$/.test(g)),
        [],
        'no group of the dropped connectors is left',
      );
    });
  },
);
