/* What a disk holds after a power loss, approximately: preloaded into a server, every fsync and
 * fdatasync of a file whose path starts with SHADOW_MATCH first copies that whole file into
 * SHADOW_DIR (same base name; written to a temporary name and renamed, so a kill -9 during the copy
 * leaves the previous image). SHADOW_DIR then holds each matched file as of its last sync: what
 * survives a power loss if nothing unsynced reached the platter (the pessimistic case, which is the
 * one retention must survive). A file never synced is absent. Truncations and unlinks are not
 * mirrored (a truncation SQLite does not sync is not durable either).
 * SHADOW_KILL_AT=n: the process kills itself with SIGKILL right after the n-th matched sync returns
 * (inside a durable point: after the WAL's sync, before the copy into the file or before the WAL is
 * started over), saying so on stderr as the server's crash points do.
 *   cc -shared -fPIC -O2 -o /tmp/fsync-shadow.so bench/fsync-shadow.c -ldl
 *   SHADOW_MATCH=/data/checkpoint.db SHADOW_DIR=/tmp/disk LD_PRELOAD=/tmp/fsync-shadow.so sluice ...
 * Used by bench/durability-attack.ts --power-loss.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int matched_syncs = 0;

/* After a matched sync returned: the n-th one (SHADOW_KILL_AT) kills the process. */
static void maybe_kill(int matched) {
  const char *at = getenv("SHADOW_KILL_AT");
  if (!matched || !at) return;
  if (__atomic_add_fetch(&matched_syncs, 1, __ATOMIC_SEQ_CST) != atoi(at)) return;
  static const char msg[] = "sluice: crash point \"checkpoint-file-fsync\" reached; killing the process\n";
  if (write(2, msg, sizeof msg - 1) < 0) { /* dying anyway */ }
  kill(getpid(), SIGKILL);
}

/* Copies the file behind fd into SHADOW_DIR when its path matches; whether it matched. */
static int shadow(int fd) {
  const char *match = getenv("SHADOW_MATCH");
  const char *dir = getenv("SHADOW_DIR");
  if (!match || !dir) return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = 0;
  if (strncmp(path, match, strlen(match)) != 0) return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char tmp[PATH_MAX], dest[PATH_MAX];
  snprintf(dest, sizeof dest, "%s/%s", dir, base);
  snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, base, (int)gettid());
  int in = open(path, O_RDONLY);
  if (in < 0) return 1;
  int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    close(in);
    return 1;
  }
  char buf[1 << 16];
  off_t at = 0;
  ssize_t r;
  while ((r = pread(in, buf, sizeof buf, at)) > 0) {
    if (write(out, buf, (size_t)r) != r) break;
    at += r;
  }
  close(in);
  close(out);
  rename(tmp, dest);
  return 1;
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  int matched = shadow(fd);
  int result = real(fd);
  maybe_kill(matched);
  return result;
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  int matched = shadow(fd);
  int result = real(fd);
  maybe_kill(matched);
  return result;
}
