/* A slow disk for the group-commit benchmark: preloaded into a server, every fsync and fdatasync
 * first sleeps SLOW_SYNC_US microseconds (default 5000), as a rotating disk or a network volume
 * would make it wait. The machine's own disk syncs in well under a millisecond, which hides whether
 * the WAL sync blocks the server's thread.
 *   cc -shared -fPIC -O2 -o /tmp/slow-fsync.so bench/slow-fsync.c -ldl
 *   SLOW_SYNC_US=5000 LD_PRELOAD=/tmp/slow-fsync.so BENCH_SERVER_CLI=<checkout>/src/cli.ts \
 *     node --import tsx bench/server-e2e.ts
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static int delay_us(void) {
  const char *s = getenv("SLOW_SYNC_US");
  return s ? atoi(s) : 5000;
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  usleep(delay_us());
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  usleep(delay_us());
  return real(fd);
}
