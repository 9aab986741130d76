// Every function Sluice generates from text (kernels, writers, row builders) is compiled here.
// V8 keeps one compiled function, with one set of type feedback, per distinct source text (its eval
// cache): two copies of Sluice loaded in one process — a paired benchmark runs two checkouts side by
// side — would share each other's generated kernels, and each side's data would retune the other's.
// The text is prefixed with this module's own URL, different for each copy, so each copy compiles its
// own; within one copy identical texts still share, as they always did.

const COPY = `/* ${import.meta.url.replace(/\*\//g, '* /')} */\n`;

/** `new Function(...params, body)`, the body marked as this copy's. */
export function generatedFunction(...paramsAndBody: string[]): (...args: never[]) => unknown {
  const body = paramsAndBody.pop() ?? '';
  return new Function(...paramsAndBody, COPY + body) as (...args: never[]) => unknown;
}
