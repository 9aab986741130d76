// What `sluice start` prints when the server cannot bind its address. A first run of `npm start`
// on a machine where something already holds port 8080 used to end with Node's bare
// "listen EADDRINUSE" and nothing on what to do; the message names the way out instead.

/** The lines to print (each ends with a newline) for a failed `listen` on host:port. */
export function listenFailureMessage(error: unknown, host: string, port: number): string {
  const reason = error instanceof Error ? error.message : String(error);
  const code =
    typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
      ? error.code
      : undefined;
  let hint: string | undefined;
  if (code === 'EADDRINUSE') {
    hint =
      `another process is listening on port ${port}: stop it, or start on another port ` +
      '(--port <n> or PORT=<n>, e.g. `PORT=8081 npm start`; 0 picks a free one)';
  } else if (code === 'EACCES') {
    hint = `port ${port} needs privileges this process lacks: choose a port above 1023 (--port <n> or PORT=<n>)`;
  } else if (code === 'EADDRNOTAVAIL') {
    hint = `${host} is not an address of this machine: choose one it has (--host <addr> or SLUICE_HOST)`;
  }
  return (
    `sluice: cannot listen on ${host}:${port}: ${reason}\n` +
    (hint === undefined ? '' : `sluice: hint: ${hint}\n`)
  );
}
