// An epoch named in a request's query (`asOf`, `resumeFrom`): decimal digits, at most 15 of them, so
// the number is exact (an epoch never comes near 10^15: a thousand epochs a second for 30,000 years).
import { SluiceError } from '../common/errors.ts';

export const MAX_EPOCH_PARAM = 999_999_999_999_999;

/** The epoch `raw` names, or undefined when absent; INVALID_REQUEST naming `name` otherwise. */
export function epochParam(name: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && /^\d{1,15}$/.test(raw)) return Number(raw);
  const shown = String(raw).slice(0, 40);
  throw new SluiceError(
    'INVALID_REQUEST',
    /^\d+$/.test(String(raw))
      ? `invalid request: ${name} must be an epoch from 0 to ${MAX_EPOCH_PARAM}, not "${shown}"`
      : `invalid request: ${name} must be an epoch (a non-negative integer), not "${shown}"`,
  );
}
