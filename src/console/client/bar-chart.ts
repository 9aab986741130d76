// A live bar chart in SVG: one bar per key (ordered), heights easing to new values, changed bars
// flashing. Sized by viewBox so it scales with its panel; each bar carries a tooltip and the chart
// an accessible summary (the live table next to it is the full text alternative).
import { s, setAttr, setText, reducedMotion } from './dom.ts';

export interface Bar {
  readonly id: string;
  readonly label: string;
  readonly value: number;
  /** An empty slot of a histogram (a bucket with no row): takes its place on the axis, draws nothing. */
  readonly gap?: boolean;
}

const MAX_STEP = 90;
const PAD = { left: 52, right: 12, top: 14, bottom: 38 };

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const exp = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * exp >= max) return m * exp;
  return 10 * exp;
}

export class BarChart {
  readonly svg: SVGSVGElement;
  private readonly gridLayer: SVGGElement;
  private readonly barLayer: SVGGElement;
  private readonly labelLayer: SVGGElement;
  private readonly bars = new Map<string, { rect: SVGRectElement; title: SVGTitleElement; value: number }>();
  private readonly emptyText: SVGTextElement;
  private size = { W: 800, H: 300 };

  constructor(
    private readonly describe: (bars: readonly Bar[]) => string,
    private readonly tooltip: (bar: Bar) => string,
  ) {
    this.gridLayer = s('g', { class: 'grid' });
    this.barLayer = s('g', { class: 'bars' });
    this.labelLayer = s('g', { class: 'xlabels' });
    this.emptyText = s('text', { x: 400, y: 150, 'text-anchor': 'middle', class: 'empty' }, 'no rows yet');
    this.svg = s(
      'svg',
      { viewBox: '0 0 800 300', role: 'img', class: 'bar-chart' },
      this.gridLayer,
      this.barLayer,
      this.labelLayer,
      this.emptyText,
    );
  }

  update(data: readonly Bar[]): void {
    // Draw in the element's own pixel size, so text is never stretched (redrawn on resize).
    const W = Math.max(320, Math.round(this.svg.clientWidth || 800));
    const H = Math.max(160, Math.round(this.svg.clientHeight || 300));
    this.size = { W, H };
    setAttr(this.svg, 'viewBox', `0 0 ${W} ${H}`);
    setAttr(this.emptyText, 'x', W / 2);
    setAttr(this.emptyText, 'y', H / 2);
    setAttr(this.svg, 'aria-label', this.describe(data.filter((d) => d.gap !== true)));
    this.emptyText.style.display = data.length === 0 ? '' : 'none';
    const max = niceMax(Math.max(0, ...data.map((d) => (d.gap === true ? 0 : d.value))));
    const plotW = W - PAD.left - PAD.right;
    const plotH = H - PAD.top - PAD.bottom;
    this.drawGrid(max, plotH);
    const step = data.length === 0 ? plotW : Math.min(MAX_STEP, plotW / data.length);
    const gap = Math.min(4, step * 0.2);
    const seen = new Set<string>();
    data.forEach((d, i) => {
      if (d.gap === true) return;
      seen.add(d.id);
      let bar = this.bars.get(d.id);
      const height = Math.max(0, (Math.max(0, d.value) / max) * plotH);
      const x = PAD.left + i * step + gap / 2;
      const y = PAD.top + plotH - height;
      if (bar === undefined) {
        const title = s('title');
        const rect = s(
          'rect',
          { class: 'bar', 'data-key': d.label, x, y: PAD.top + plotH, width: 0, height: 0 },
          title,
        );
        this.barLayer.append(rect);
        bar = { rect, title, value: Number.NaN };
        this.bars.set(d.id, bar);
      }
      const { rect } = bar;
      setAttr(rect, 'x', x.toFixed(2));
      setAttr(rect, 'width', Math.max(0.5, step - gap).toFixed(2));
      setAttr(rect, 'data-value', d.value);
      // Geometry as CSS properties too, so the height change can transition smoothly.
      rect.style.setProperty('y', `${y.toFixed(2)}px`);
      rect.style.setProperty('height', `${height.toFixed(2)}px`);
      setAttr(rect, 'y', y.toFixed(2));
      setAttr(rect, 'height', height.toFixed(2));
      setText(bar.title, this.tooltip(d));
      if (!Number.isNaN(bar.value) && bar.value !== d.value && !reducedMotion()) {
        rect.animate([{ fill: '#b9e7ff' }, { fill: '#4cb6f0' }], { duration: 700, easing: 'ease-out' });
      }
      bar.value = d.value;
    });
    for (const [id, bar] of this.bars) {
      if (!seen.has(id)) {
        bar.rect.remove();
        this.bars.delete(id);
      }
    }
    // Keep DOM order = key order so keyboard and screen-reader order follow the axis.
    data.forEach((d) => {
      const rect = this.bars.get(d.id)?.rect;
      if (rect !== undefined) this.barLayer.append(rect);
    });
    this.drawLabels(data, step);
  }

  private drawGrid(max: number, plotH: number): void {
    const { W } = this.size;
    this.gridLayer.replaceChildren();
    for (let i = 0; i <= 4; i++) {
      const v = (max / 4) * i;
      const y = PAD.top + plotH - (v / max) * plotH;
      this.gridLayer.append(
        s('line', { x1: PAD.left, x2: W - PAD.right, y1: y, y2: y }),
        s(
          'text',
          { x: PAD.left - 8, y: y + 4, 'text-anchor': 'end' },
          Number.isInteger(v) ? v : v.toFixed(1),
        ),
      );
    }
  }

  private drawLabels(data: readonly Bar[], step: number): void {
    const { H } = this.size;
    this.labelLayer.replaceChildren();
    const every = Math.max(1, Math.ceil(44 / Math.max(1, step)));
    data.forEach((d, i) => {
      if (i % every !== 0) return;
      const x = PAD.left + i * step + step / 2;
      this.labelLayer.append(s('text', { x, y: H - PAD.bottom + 18, 'text-anchor': 'middle' }, d.label));
    });
  }
}
