// The command-line pieces the benches' option parsers share: `--flag value` and `--flag=value`
// alike, comma lists, non-negative integers (with `_` separators), and BENCH_* variables as flags.

/** Calls `onFlag` for each argument; `value()` takes the flag's inline value or the next argument. */
export function forEachFlag(
  argv: readonly string[],
  onFlag: (flag: string, value: () => string, inline: string | undefined, arg: string) => void,
): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`bench: ${flag} needs a value`);
      return v;
    };
    onFlag(flag, value, inline, arg);
  }
}

export function listArg(v: string): string[] {
  return v.split(',').filter((s) => s !== '');
}

export function intArg(flag: string, v: string): number {
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 0) throw new Error(`bench: ${flag} needs a non-negative integer`);
  return n;
}

/**
 * BENCH_FOO_BAR=v → --foo-bar=v, to go before the command line's own flags (which therefore win).
 * `switches` are flags without a value: set unless the variable is 0 or false.
 */
export function envArgs(switches: readonly string[]): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('BENCH_') || v === undefined || v === '') continue;
    const flag = '--' + k.slice(6).toLowerCase().replace(/_/g, '-');
    if (switches.includes(flag)) {
      if (v !== '0' && v !== 'false') out.push(flag);
    } else out.push(`${flag}=${v}`);
  }
  return out;
}
