// Draws a view's dataflow (GET /v1/views/{name}/dataflow) as boxes and arrows, inputs on the left,
// the output on the right: each MRM operator with its key, aggregate strategies and state, and its
// live counts (rows in/out, state size), which flash as they change.
import type { DataflowJson, DataflowNodeJson } from '../shared/dataflow-json.ts';

export type { DataflowJson, DataflowNodeJson };
import { flash, formatBytes, formatCount, h, s, setText } from './dom.ts';

const BOX_W = 340;
const GAP_X = 24;
const GAP_Y = 34;
const LINE = 17;
const MAX_CHARS = 44;

const ROLE: Record<string, string> = {
  input: 'source',
  values: 'source',
  map: 'Map · per row, stateless',
  reduce: 'Reduce + Merge · per key',
  distinct: 'Distinct · row → count',
  output: 'Output · view state + changelog',
};

function clip(text: string): string {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text;
}

function detailLines(n: DataflowNodeJson): string[] {
  const lines: string[] = [];
  switch (n.kind) {
    case 'input':
      lines.push(`${n.sourceKind ?? 'source'} ${n.source ?? ''}`);
      if (n.columns !== undefined) lines.push(n.columns.join(', '));
      break;
    case 'map':
      if (n.filter !== undefined) lines.push(`filter ${n.filter}`);
      if (n.project !== undefined) lines.push(`project ${n.project.join(', ')}`);
      if (n.fusedInto !== null) lines.push(`fused into n${n.fusedInto}`);
      break;
    case 'reduce':
      lines.push(`key ${n.key?.join(', ') || '(none: one group)'}`);
      for (const a of n.aggregates ?? []) lines.push(`${a.text} · ${a.strategy ?? '?'}`);
      break;
    case 'output':
      lines.push(`key ${n.key === undefined ? 'none (multiset)' : n.key.join(', ')}`);
      if (n.columns !== undefined) lines.push(n.columns.join(', '));
      break;
    default:
      lines.push(n.text);
  }
  if (n.state !== undefined) lines.push(`state ${n.state}`);
  return lines;
}

interface Placed {
  readonly node: DataflowNodeJson;
  readonly x: number;
  readonly y: number;
  readonly height: number;
}

export class DataflowView {
  readonly element: HTMLElement;
  private readonly svgHolder: HTMLElement;
  private readonly textOut: HTMLPreElement;
  private shape = '';
  private readonly counters = new Map<number, { el: SVGTextElement; last: string }>();

  constructor(private readonly linkTo: (view: string) => string) {
    this.svgHolder = h('div', { class: 'dataflow-canvas' });
    this.textOut = h('pre', { class: 'plan-text' });
    this.element = h(
      'div',
      { class: 'dataflow' },
      this.svgHolder,
      h(
        'p',
        { class: 'legend-note' },
        'Map: per row, stateless. Reduce: combines a batch per key. Merge: folds it into the stored state (new = g(old, partial)), retracting old contributions. Counts are rows in/out since start.',
      ),
      h('details', {}, h('summary', {}, 'EXPLAIN DATAFLOW text'), this.textOut),
    );
  }

  update(flow: DataflowJson): void {
    // Rebuild the drawing only when the plan changes; otherwise update the counters in place.
    const shape = flow.text;
    if (shape !== this.shape) {
      this.shape = shape;
      this.build(flow);
      setText(this.textOut, flow.text);
    }
    for (const n of flow.nodes) {
      const c = this.counters.get(n.id);
      if (c === undefined) continue;
      const text = this.countText(n);
      if (text !== c.last) {
        setText(c.el, text);
        if (c.last !== '') flash(c.el.parentElement ?? c.el, 'rgba(255, 209, 102, 0.5)');
        c.last = text;
      }
    }
  }

  private countText(n: DataflowNodeJson): string {
    if (n.fusedInto !== null) return 'runs inside its Reduce';
    if (n.stats === null) return 'no counts';
    const parts = [`in ${formatCount(n.stats.rowsIn)}`, `out ${formatCount(n.stats.rowsOut)}`];
    if (n.sharesStateWith !== undefined && n.sharesStateWith !== null && n.stats.stateBytes === 0) {
      parts.push(`state in n${n.sharesStateWith}`);
    } else if (n.stateful) parts.push(`state ${formatBytes(n.stats.stateBytes)}`);
    return parts.join(' · ');
  }

  private build(flow: DataflowJson): void {
    this.counters.clear();
    const byId = new Map(flow.nodes.map((n) => [n.id, n]));
    const level = new Map<number, number>();
    const levelOf = (id: number): number => {
      const known = level.get(id);
      if (known !== undefined) return known;
      level.set(id, 0);
      const n = byId.get(id);
      const l = n === undefined || n.inputs.length === 0 ? 0 : 1 + Math.max(...n.inputs.map(levelOf));
      level.set(id, l);
      return l;
    };
    const columns: DataflowNodeJson[][] = [];
    for (const n of flow.nodes) (columns[levelOf(n.id)] ??= []).push(n);
    const details = new Map(flow.nodes.map((n) => [n.id, detailLines(n)]));
    const heightOf = (n: DataflowNodeJson): number => 62 + LINE * (details.get(n.id)?.length ?? 0) + 14;
    // Data flows top to bottom: one row per level (longest path from an input), nodes of a level
    // side by side, so a chain stays narrow enough to sit beside the live table.
    const placed = new Map<number, Placed>();
    const widest = Math.max(1, ...columns.map((row) => row.length));
    const width = 20 + widest * BOX_W + (widest - 1) * GAP_X;
    let y = 10;
    for (const row of columns) {
      const rowH = Math.max(...row.map(heightOf));
      const rowW = row.length * BOX_W + (row.length - 1) * GAP_X;
      let x = (width - rowW) / 2;
      for (const n of row) {
        placed.set(n.id, { node: n, x, y, height: heightOf(n) });
        x += BOX_W + GAP_X;
      }
      y += rowH + GAP_Y;
    }
    const height = y - GAP_Y + 10;
    const marker = s(
      'marker',
      {
        id: 'df-arrow',
        viewBox: '0 0 10 10',
        refX: 9,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: 'auto-start-reverse',
      },
      s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }),
    );
    const svg = s('svg', {
      viewBox: `0 0 ${width} ${height}`,
      class: 'dataflow-graph',
      role: 'list',
      'aria-label': `Dataflow of ${flow.view}: ${flow.nodes.length} operators, inputs first`,
    });
    svg.style.maxWidth = `${width}px`;
    svg.append(s('defs', {}, marker));
    for (const p of placed.values()) {
      for (const input of p.node.inputs) {
        const from = placed.get(input);
        if (from === undefined) continue;
        const x1 = from.x + BOX_W / 2;
        const y1 = from.y + from.height;
        const x2 = p.x + BOX_W / 2;
        const y2 = p.y - 2;
        const mid = (y1 + y2) / 2;
        svg.append(
          s('path', {
            class: 'edge',
            d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2}`,
            'marker-end': 'url(#df-arrow)',
          }),
        );
      }
    }
    for (const p of placed.values()) svg.append(this.box(p, details.get(p.node.id) ?? []));
    this.svgHolder.replaceChildren(svg);
  }

  private box(p: Placed, lines: readonly string[]): SVGGElement {
    const n = p.node;
    const label = `n${n.id} ${n.title}: ${lines.join('; ')}`;
    const g = s('g', {
      class: `df-node kind-${n.kind}${n.fusedInto !== null ? ' fused' : ''}${n.stateful ? ' stateful' : ''}`,
      transform: `translate(${p.x},${p.y})`,
      'data-node': n.id,
      'data-kind': n.kind,
      role: 'listitem',
      'aria-label': label,
    });
    g.append(s('title', {}, n.text));
    g.append(s('rect', { class: 'box', width: BOX_W, height: p.height, rx: 8 }));
    g.append(s('rect', { class: 'band', width: BOX_W, height: 6, rx: 3 }));
    g.append(
      s(
        'text',
        { class: 'df-title', x: 12, y: 26 },
        `${n.title}`,
        s('tspan', { class: 'df-id', dx: 8 }, `n${n.id}`),
      ),
    );
    g.append(s('text', { class: 'df-role', x: 12, y: 44 }, ROLE[n.kind] ?? n.kind));
    lines.forEach((line, i) => {
      const t = s('text', { class: 'df-detail', x: 12, y: 62 + i * LINE }, clip(line));
      if (line.includes(' · invertible') || line.includes(' · multiset')) t.classList.add('df-agg');
      g.append(t);
    });
    const countsBg = s('g', { class: 'df-counts' });
    const counts = s('text', { x: 12, y: p.height - 10, 'data-counts': n.id }, '');
    countsBg.append(counts);
    g.append(countsBg);
    this.counters.set(n.id, { el: counts, last: '' });
    if (n.kind === 'input' && n.sourceKind === 'view' && n.source !== undefined) {
      const a = s('a', { href: this.linkTo(n.source), 'aria-label': `open view ${n.source}` });
      a.append(...Array.from(g.childNodes));
      g.append(a);
    }
    return g;
  }
}
