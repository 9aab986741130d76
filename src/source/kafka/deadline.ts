// Bounds a connector step that waits on a broker: a peer that accepts connections and never answers
// (or answers nonsense the client keeps waiting on) must turn into an error the connector shows and
// retries, not a state that stays "starting" with no error.

/** How long a connector waits for a broker while connecting before it reports an error and retries. */
export const CONNECT_TIMEOUT_MS = 15_000;

export class DeadlineExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * `promise`, or a DeadlineExceeded with `message` once `ms` pass first. The step itself is not
 * cancelled (the caller closes its client); its late outcome is ignored.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(message())), ms);
    timer.unref();
  });
  promise.catch(() => undefined); // a late failure is not an unhandled rejection
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
