// A small rolling line plot (the last N samples of one or two series) in SVG, with the latest
// values printed beside it so the numbers are readable without the picture.
import { h, s, setAttr, setText } from './dom.ts';

export interface Series {
  readonly name: string;
  readonly className: string;
  readonly format: (v: number) => string;
}

const W = 300;
const H = 80;

export class RollingPlot {
  readonly element: HTMLElement;
  private readonly paths: SVGPathElement[];
  private readonly dots: SVGCircleElement[];
  private readonly values: HTMLElement[];
  private readonly samples: (number | null)[][];
  private readonly svg: SVGSVGElement;

  constructor(
    title: string,
    private readonly series: readonly Series[],
    private readonly capacity = 60,
  ) {
    this.samples = series.map(() => []);
    this.paths = series.map((sr) => s('path', { class: `line ${sr.className}` }));
    this.dots = series.map((sr) => s('circle', { class: `dot ${sr.className}`, r: 3, cx: -10, cy: -10 }));
    this.svg = s(
      'svg',
      { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', class: 'rolling', 'aria-hidden': 'true' },
      ...this.paths,
      ...this.dots,
    );
    this.values = series.map(() => h('strong', {}, '—'));
    this.element = h(
      'figure',
      { class: 'rolling-plot' },
      h(
        'figcaption',
        {},
        h('span', { class: 'plot-title' }, title),
        ...series.map((sr, i) =>
          h(
            'span',
            { class: `legend ${sr.className}` },
            h('span', { class: 'swatch', 'aria-hidden': 'true' }),
            `${sr.name} `,
            this.values[i] ?? '',
          ),
        ),
      ),
      this.svg,
    );
  }

  push(values: readonly (number | null)[]): void {
    values.forEach((v, i) => {
      const list = this.samples[i];
      if (list === undefined) return;
      list.push(v);
      if (list.length > this.capacity) list.shift();
      const out = this.values[i];
      const sr = this.series[i];
      if (out !== undefined && sr !== undefined) setText(out, v === null ? '—' : sr.format(v));
    });
    const max = Math.max(1e-9, ...this.samples.flat().map((v) => v ?? 0));
    this.samples.forEach((list, i) => {
      const path = this.paths[i];
      if (path === undefined) return;
      let d = '';
      let last: [number, number] | null = null;
      list.forEach((v, j) => {
        if (v === null) return;
        const x = ((W - 4) / (this.capacity - 1)) * (this.capacity - list.length + j);
        const y = H - 4 - (v / max) * (H - 8);
        d += `${d === '' ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
        last = [x, y];
      });
      setAttr(path, 'd', d === '' ? 'M0,0' : d);
      const dot = this.dots[i];
      if (dot !== undefined && last !== null) {
        setAttr(dot, 'cx', (last as [number, number])[0].toFixed(1));
        setAttr(dot, 'cy', (last as [number, number])[1].toFixed(1));
      }
    });
  }
}
