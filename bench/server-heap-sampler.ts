// A preload for a server under a bench: V8's sampling heap profiler over the whole process life,
// counting every sampled allocation — also the ones a scavenge or a full collection freed, which
// node's own `--heap-prof` drops (it keeps only what is still live when it stops, so the short-lived
// garbage a request makes, the scavenger's work, never shows). On exit it writes a .heapprofile
// (DevTools' format) to BENCH_HEAP_SAMPLE_OUT; `bench/heapprofile-summary.ts` reads it.
//
//   BENCH_HEAP_SAMPLE_OUT=/tmp/h.heapprofile BENCH_SERVER_NODE_ARGS="--import tsx --import ./bench/server-heap-sampler.ts" \
//     BENCH_BATCHES=1000 BENCH_LATENCY_SECONDS=1 node --import tsx bench/server-e2e.ts
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.BENCH_HEAP_SAMPLE_OUT;
if (out !== undefined && out !== '') {
  const session = new Session();
  session.connect();
  // One sample per 32 KiB allocated on average (node's --heap-prof default is 512 KiB): a 1,000-row
  // request allocates a few MB, so each request still gets about a hundred samples.
  session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.BENCH_HEAP_SAMPLE_INTERVAL ?? 32768),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // A session on the process's own thread answers synchronously, so the profile is taken and written
  // in the exit handler, after the server's own shutdown.
  process.once('exit', () => {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err === null) writeFileSync(out, JSON.stringify(result.profile));
    });
  });
}
