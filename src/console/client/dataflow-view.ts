// Draws a view's dataflow (GET /v1/views/{name}/dataflow, the DataflowPlan as lowered) as boxes and
// arrows, inputs at the top, the output at the bottom: each operator with its key, aggregate
// strategies, fused Map stage, join condition and state, and its live counts (rows in/out, state
// size), which flash as they change. A Join has two incoming arrows, labelled left and right.
import type { DataflowJson, DataflowNodeJson } from '../shared/dataflow-json.ts';
import { layoutDataflow, type LayoutEdge, type PlacedBox } from '../shared/dataflow-layout.ts';

export type { DataflowJson, DataflowNodeJson };
import { flash, formatBytes, formatCount, h, s, setText } from './dom.ts';

const BOX_W = 340;
const GAP_X = 24;
const GAP_Y = 40;
const LINE = 17;
const MAX_CHARS = 44;
/** Header (title, role) above the detail lines, and the counts line below them. */
const HEAD = 62;
const FOOT = 14;
/** The fused Map stage's inset inside a Reduce: its heading and padding around its lines. */
const INSET_HEAD = 22;
const INSET_PAD = 10;

const ROLE: Record<DataflowNodeJson['kind'], string> = {
  input: 'source',
  values: 'source · one empty row',
  map: 'Map · per row, stateless',
  flatmap: 'FlatMap · rows per input row, stateless',
  reduce: 'Reduce + Merge · per key',
  distinct: 'Distinct · row → count',
  join: 'Join · both inputs arranged by key',
  union: 'Union all · stateless',
  setop: 'Set operation · row → count per side',
  semijoin: 'Semi-join · left rows by key, match counts',
  topn: 'Top-N · every row, sorted per partition',
  window: 'Window · every row with its values, sorted per partition',
  temporalFilter: 'Temporal filter · rows waiting on the clock, by time',
  temporalJoin: 'Temporal join · right by key, left rows with what they met',
  output: 'Output · view state + changelog',
};

function clip(text: string, max = MAX_CHARS): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a box shows: its lines, and for a Reduce the lines of the Map stage fused into it. */
interface Detail {
  readonly lines: readonly string[];
  readonly fused: readonly string[] | null;
}

function detailOf(n: DataflowNodeJson): Detail {
  const lines: string[] = [];
  let fused: string[] | null = null;
  switch (n.kind) {
    case 'input':
      lines.push(`${n.sourceKind} ${n.source}`, n.columns.join(', '));
      break;
    case 'values':
      break;
    case 'map':
      if (n.filter !== null) lines.push(`filter ${n.filter}`);
      if (n.project !== null) lines.push(`project ${n.project.join(', ')}`);
      break;
    case 'reduce':
      if (n.fused !== null) {
        fused = [];
        if (n.fused.filter !== null) fused.push(`filter ${n.fused.filter}`);
        if (n.fused.keys.length > 0) fused.push(`keys ${n.fused.keys.join(', ')}`);
        if (n.fused.arguments.length > 0) fused.push(`arguments ${n.fused.arguments.join(', ')}`);
        if (fused.length === 0) fused.push('(reads the input row as it is)');
      }
      lines.push(`key ${n.key.join(', ') || '(none: one group)'}`);
      for (const a of n.aggregates) lines.push(`${a.text} · ${a.strategy}`);
      break;
    case 'distinct':
    case 'union':
      break;
    case 'setop':
      lines.push(n.op);
      break;
    case 'semijoin':
      lines.push(n.mode);
      for (const pair of n.on) lines.push(`on ${pair}`);
      break;

    case 'topn':
    case 'window':
    case 'flatmap':
    case 'temporalFilter':
    case 'temporalJoin':
      lines.push(n.text);
      break;
    case 'join':
      lines.push(`${n.joinKind} join`);
      if (n.on.length === 0) lines.push('cross product: every left row × every right row');
      for (const pair of n.on) lines.push(`on ${pair}`);
      if (n.residual !== null) lines.push(`residual ${n.residual}`);
      if (n.fused !== null) {
        fused = [];
        if (n.fused.filter !== null) fused.push(`filter ${n.fused.filter}`);
        if (n.fused.project !== null) fused.push(`project ${n.fused.project.join(', ')}`);
      }
      break;
    case 'output':
      lines.push(`key ${n.key === null ? 'none (multiset)' : n.key.join(', ') || '(none: one row)'}`);
      lines.push(n.columns.join(', '));
      if (n.sharesStateWith !== null)
        lines.push(`state of n${n.sharesStateWith} (reads its groups, no copy)`);
      break;
  }
  if (n.state !== null) lines.push(`state ${n.state}`);
  return { lines, fused };
}

function heightOf(d: Detail): number {
  const inset = d.fused === null ? 0 : INSET_HEAD + LINE * d.fused.length + INSET_PAD + 6;
  return HEAD + inset + LINE * d.lines.length + FOOT;
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
        'Map: per row, stateless (a Map stage fused into a Reduce runs inside it, building no rows). Reduce: combines a batch per key. Merge: folds it into the stored state (new = g(old, partial)), retracting old contributions. Join: each input arranged by its key; a change on one side meets the other side’s arrangement. Counts are rows in/out since start.',
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
      const text = countText(n);
      if (text !== c.last) {
        setText(c.el, text);
        if (c.last !== '') flash(c.el.parentElement ?? c.el, 'rgba(255, 209, 102, 0.5)');
        c.last = text;
      }
    }
  }

  private build(flow: DataflowJson): void {
    this.counters.clear();
    const details = new Map(flow.nodes.map((n) => [n.id, detailOf(n)]));
    const layout = layoutDataflow(
      flow.nodes.map((n) => ({
        id: n.id,
        inputs: n.inputs,
        height: heightOf(details.get(n.id) as Detail),
      })),
      flow.output,
      { boxWidth: BOX_W, gapX: GAP_X, gapY: GAP_Y, margin: 10 },
    );
    const { width, height } = layout;
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
    // Up to two boxes side by side scale down to the card; a wider join tree scrolls instead.
    svg.style.maxWidth = `${width}px`;
    svg.style.minWidth = `${Math.min(width, 2 * BOX_W + GAP_X + 20)}px`;
    svg.append(s('defs', {}, marker));
    for (const e of layout.edges) svg.append(...edge(e));
    for (const n of flow.nodes) {
      const p = layout.boxes.get(n.id);
      if (p !== undefined) svg.append(this.box(n, p, details.get(n.id) as Detail));
    }
    this.svgHolder.replaceChildren(svg);
  }

  private box(n: DataflowNodeJson, p: PlacedBox, d: Detail): SVGGElement {
    const all = [...(d.fused === null ? [] : ['fused Map:', ...d.fused]), ...d.lines];
    const g = s('g', {
      class: `df-node kind-${n.kind}${n.stateful ? ' stateful' : ''}`,
      transform: `translate(${p.x},${p.y})`,
      'data-node': n.id,
      'data-kind': n.kind,
      'data-inputs': n.inputs.join(' '),
      role: 'listitem',
      'aria-label': `n${n.id} ${n.title}: ${all.join('; ')}`,
    });
    g.append(s('title', {}, [`n${n.id} ${n.title}`, ...all].join('\n')));
    g.append(s('rect', { class: 'box', width: BOX_W, height: p.height, rx: 8 }));
    g.append(s('rect', { class: 'band', width: BOX_W, height: 6, rx: 3 }));
    g.append(
      s(
        'text',
        { class: 'df-title', x: 12, y: 26 },
        n.title,
        s('tspan', { class: 'df-id', dx: 8 }, `n${n.id}`),
      ),
    );
    g.append(s('text', { class: 'df-role', x: 12, y: 44 }, ROLE[n.kind]));
    let y = HEAD;
    if (d.fused !== null) {
      // The Map stage lowering folded into this Reduce, drawn inside it: it has no node of its own.
      const insetH = INSET_HEAD + LINE * d.fused.length + INSET_PAD;
      const inset = s('g', { class: 'df-fused', 'data-fused': n.id, transform: `translate(8,${y - 12})` });
      inset.append(s('rect', { class: 'inset', width: BOX_W - 16, height: insetH, rx: 6 }));
      inset.append(s('text', { class: 'df-role', x: 8, y: 16 }, 'fused Map · per row, no projected rows'));
      d.fused.forEach((line, i) => {
        inset.append(
          s('text', { class: 'df-detail', x: 8, y: INSET_HEAD + 12 + i * LINE }, clip(line, MAX_CHARS - 2)),
        );
      });
      g.append(inset);
      y += insetH + 6;
    }
    d.lines.forEach((line, i) => {
      const t = s('text', { class: 'df-detail', x: 12, y: y + i * LINE }, clip(line));
      if (line.endsWith(' · invertible') || line.endsWith(' · multiset')) t.classList.add('df-agg');
      g.append(t);
    });
    const countsBg = s('g', { class: 'df-counts' });
    const counts = s('text', { x: 12, y: p.height - 10, 'data-counts': n.id }, '');
    countsBg.append(counts);
    g.append(countsBg);
    this.counters.set(n.id, { el: counts, last: '' });
    if (n.kind === 'input' && n.sourceKind === 'view') {
      const a = s('a', { href: this.linkTo(n.source), 'aria-label': `open view ${n.source}` });
      a.append(...Array.from(g.childNodes));
      g.append(a);
    }
    return g;
  }
}

function countText(n: DataflowNodeJson): string {
  if (n.stats === null) return 'no counts';
  const parts = [`in ${formatCount(n.stats.rowsIn)}`, `out ${formatCount(n.stats.rowsOut)}`];
  if (n.kind === 'output' && n.sharesStateWith !== null) parts.push(`state in n${n.sharesStateWith}`);
  else if (n.stateful) parts.push(`state ${formatBytes(n.stats.stateBytes)}`);
  return parts.join(' · ');
}

/** An arrow from an input's bottom to the node's top; a Join's two are labelled left and right. */
function edge(e: LayoutEdge): SVGElement[] {
  const mid = (e.y1 + e.y2) / 2;
  const path = s('path', {
    class: `edge${e.side === null ? '' : ` edge-${e.side}`}`,
    d: `M${e.x1},${e.y1} C${e.x1},${mid} ${e.x2},${mid} ${e.x2},${e.y2}`,
    'marker-end': 'url(#df-arrow)',
    'data-from': e.from,
    'data-to': e.to,
    ...(e.side === null ? {} : { 'data-side': e.side }),
  });
  if (e.side === null) return [path];
  const label = s(
    'text',
    {
      class: 'df-side',
      x: e.side === 'left' ? e.x2 - 6 : e.x2 + 6,
      y: e.y2 - 8,
      'text-anchor': e.side === 'left' ? 'end' : 'start',
      'data-side-label': e.to,
    },
    e.side,
  );
  return [path, label];
}
