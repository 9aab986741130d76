// One template of the join differential suite run alone over several seeds (or the one SLUICE_SEED
// names), as the per-family differential tests run theirs: the totals of what was compared, and a
// replay command for a failure that names the template and the epochs.
import { deriveSeed } from './random-workload.ts';
import { joinReplayCommand, runJoinDifferential } from './join-workload.ts';

export interface TemplateSeedsRun {
  readonly seeds: number;
  /** View comparisons equal to SQLite. */
  readonly checks: number;
  /** Views rightly in error (a scalar subquery of several rows). */
  readonly erred: number;
}

/**
 * Runs `template` over `seeds` seeds derived from `seedBase` (the template's place in its family
 * keeps the seeds of different templates apart), `epochs` epochs each.
 */
export function runTemplateSeeds(
  template: string,
  options: { readonly seeds: number; readonly epochs: number; readonly seedBase: number },
): TemplateSeedsRun {
  const only = process.env['SLUICE_SEED'];
  const seeds =
    only !== undefined
      ? [Number(only)]
      : Array.from({ length: options.seeds }, (_, i) => deriveSeed(options.seedBase, i));
  let checks = 0;
  let erred = 0;
  for (const seed of seeds) {
    const r = runJoinDifferential(seed, {
      epochs: options.epochs,
      templates: [template],
      replay: (s) =>
        `SLUICE_JOIN_TEMPLATE=${template} SLUICE_EPOCHS=${options.epochs} ${joinReplayCommand(s)}`,
    });
    checks += r.checks;
    erred += r.erred;
  }
  return { seeds: seeds.length, checks, erred };
}
