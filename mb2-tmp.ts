import { hasLongDigitRun } from './src/common/json-codec.ts';
import { isAscii } from 'node:buffer';
let nextId = 1_000_000, seed = 7;
const rand = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
const body = () => { let s = '['; for (let i = 0; i < 1000; i++) s += `${i === 0 ? '' : ','}{"order_id":${nextId++},"seller_id":${rand(100000)},"amount":${1 + rand(100)}}`; return Buffer.from(`${s}]`); };
const bodies = Array.from({ length: 50 }, body);
const texts = bodies.map((b) => b.toString());
// Backwards check from a candidate window end (Horspool-like): a window [p-15, p] all digits/points,
// not starting with points only... simplified: the run-length semantics as in hasLongDigitRun.
function longRunBytes(b: Uint8Array): boolean {
  const n = b.length;
  let i = 15;
  while (i < n) {
    let c = b[i]!;
    if (!((c >= 48 && c <= 57) || c === 46)) { i += 16; continue; }
    let left = i;
    while (left > 0) { c = b[left - 1]!; if ((c >= 48 && c <= 57) || c === 46) left--; else break; }
    let right = i;
    while (right + 1 < n) { c = b[right + 1]!; if ((c >= 48 && c <= 57) || c === 46) right++; else break; }
    while (left <= right && b[left] === 46) left++;
    if (right - left + 1 >= 16) return true;
    i = right + 17;
  }
  return false;
}
function backwards(b: Uint8Array): boolean {
  const n = b.length;
  let end = 15; // candidate last index of a 16-long run
  while (end < n) {
    let j = end;
    const stop = end - 15;
    while (j >= stop) { const c = b[j]!; if ((c >= 48 && c <= 57) || c === 46) j--; else break; }
    if (j < stop) {
      // 16 run characters end at `end`; exact rule: measure the whole run
      let left = stop; while (left > 0) { const c = b[left - 1]!; if ((c >= 48 && c <= 57) || c === 46) left--; else break; }
      let right = end; while (right + 1 < n) { const c = b[right + 1]!; if ((c >= 48 && c <= 57) || c === 46) right++; else break; }
      while (left <= right && b[left] === 46) left++;
      if (right - left + 1 >= 16) return true;
      end = right + 17; continue;
    }
    end = j + 16;
  }
  return false;
}
const time = (name: string, f: (i: number) => unknown) => { const t0 = process.cpuUsage(); let x = 0; for (let r = 0; r < 40; r++) for (let i = 0; i < 50; i++) if (f(i)) x++; const u = process.cpuUsage(t0); console.log(name.padEnd(12), ((u.user + u.system) / 2000).toFixed(1), 'us', x); };
for (let r = 0; r < 3; r++) {
  time('string', (i) => hasLongDigitRun(texts[i]!));
  time('bytes', (i) => longRunBytes(bodies[i]!));
  time('backwards', (i) => backwards(bodies[i]!));
  time('isAscii', (i) => isAscii(bodies[i]!));
  time('indexOf\\', (i) => bodies[i]!.indexOf(0x5c) >= 0);
}
function backwardsStr(b: string): boolean {
  const n = b.length;
  let end = 15;
  while (end < n) {
    let j = end;
    const stop = end - 15;
    while (j >= stop) { const c = b.charCodeAt(j); if ((c >= 48 && c <= 57) || c === 46) j--; else break; }
    if (j < stop) {
      let left = stop; while (left > 0) { const c = b.charCodeAt(left - 1); if ((c >= 48 && c <= 57) || c === 46) left--; else break; }
      let right = end; while (right + 1 < n) { const c = b.charCodeAt(right + 1); if ((c >= 48 && c <= 57) || c === 46) right++; else break; }
      while (left <= right && b.charCodeAt(left) === 46) left++;
      if (right - left + 1 >= 16) return true;
      end = right + 17; continue;
    }
    end = j + 16;
  }
  return false;
}
for (let r = 0; r < 3; r++) {
  time('backStr', (i) => backwardsStr(texts[i]!));
  time('indexOf\\u', (i) => texts[i]!.indexOf('\\u') >= 0);
  time('regex', (i) => /\\u[dD][89a-fA-F]/.test(texts[i]!));
}
