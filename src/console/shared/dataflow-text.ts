// Reads the EXPLAIN DATAFLOW print (src/ivm/dataflow-plan.ts printDataflow, a golden-tested format)
// back into a graph the console can draw: nodes with their kind, keys, aggregate strategies and
// state, and edges from the indentation. Parts it does not recognise stay in `text`, so a change of
// the print degrades the drawing, never breaks it.

export interface GraphAggregate {
  readonly text: string;
  /** "invertible" (O(1) per group) or "multiset" (value → count per group), when printed. */
  readonly strategy: string | null;
}

export interface GraphNode {
  readonly id: number;
  /** input | values | map | reduce | distinct | output (or the printed word for a newer kind). */
  readonly kind: string;
  /** The operator as printed: "Input", "Map", "Reduce+Merge", … */
  readonly title: string;
  /** Ids of the nodes feeding this one. */
  readonly inputs: number[];
  readonly source?: string;
  readonly sourceKind?: string;
  readonly key?: readonly string[];
  readonly aggregates?: readonly GraphAggregate[];
  readonly filter?: string;
  readonly project?: readonly string[];
  readonly state?: string;
  readonly columns?: readonly string[];
  readonly stateful: boolean;
  /** The printed line without indentation. */
  readonly text: string;
}

export interface DataflowGraph {
  readonly view: string;
  readonly fingerprint: string | null;
  /** Inputs first, the output last. */
  readonly nodes: readonly GraphNode[];
  readonly output: number | null;
}

const KINDS: Record<string, string> = {
  Input: 'input',
  Values: 'values',
  Map: 'map',
  'Reduce+Merge': 'reduce',
  Join: 'join',
  Distinct: 'distinct',
  Output: 'output',
};

/** The text inside the bracket opening at `open` (balanced), and the index after it. */
function bracketed(s: string, open: number): { inner: string; end: number } | null {
  const pairs: Record<string, string> = { '[': ']', '(': ')' };
  const closer = pairs[s[open] ?? ''];
  if (closer === undefined) return null;
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0) return { inner: s.slice(open + 1, i), end: i + 1 };
    }
  }
  return null;
}

/** Splits on top-level commas (not inside brackets or parentheses). */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = s.slice(start).trim();
  if (last !== '') out.push(last);
  return out;
}

function after(s: string, word: string): { inner: string; end: number } | null {
  const at = s.indexOf(`${word} [`);
  return at < 0 ? null : bracketed(s, at + word.length + 1);
}

function stripType(col: string): string {
  const i = col.indexOf(':');
  return i < 0 ? col : col.slice(0, i);
}

function parseLine(id: number, title: string, rest: string, text: string): Omit<GraphNode, 'inputs'> {
  const kind = KINDS[title] ?? title.toLowerCase();
  const node: { -readonly [K in keyof GraphNode]?: GraphNode[K] } = {
    id,
    kind,
    title,
    text,
    stateful: false,
  };
  const arrow = rest.lastIndexOf('→ [');
  const tail = arrow >= 0 ? bracketed(rest, arrow + 2) : null;
  const lastBracket = rest.lastIndexOf('[');
  switch (kind) {
    case 'input': {
      const m = /^(table|view)\s+(\S+)/.exec(rest);
      if (m !== null) {
        node.sourceKind = m[1] as string;
        node.source = m[2] as string;
      }
      const cols = lastBracket >= 0 ? bracketed(rest, lastBracket) : null;
      if (cols !== null) node.columns = splitTopLevel(cols.inner).map(stripType);
      break;
    }
    case 'map': {
      const body = (arrow >= 0 ? rest.slice(0, arrow) : rest).replace(/^\(stateless\)\s*/, '').trim();
      for (const part of body.split(/;\s*(?=filter |project \[)/)) {
        if (part.startsWith('filter ')) node.filter = part.slice('filter '.length).trim();
        else if (part.startsWith('project [')) {
          const p = bracketed(part, 'project '.length);
          if (p !== null) node.project = splitTopLevel(p.inner);
        }
      }
      if (tail !== null) node.columns = splitTopLevel(tail.inner).map(stripType);
      break;
    }
    case 'reduce': {
      const key = after(rest, 'key');
      if (key !== null) node.key = splitTopLevel(key.inner).map((k) => k.replace(/^#\d+:/, ''));
      const aggs = after(rest, 'aggregates');
      if (aggs !== null) {
        node.aggregates = splitTopLevel(aggs.inner).map((a) => {
          const open = a.indexOf(' [');
          const strategyText = open >= 0 ? (bracketed(a, open + 1)?.inner ?? '') : '';
          const strategy = /^(\w+)/.exec(strategyText)?.[1] ?? null;
          return { text: open >= 0 ? a.slice(0, open) : a, strategy };
        });
      }
      if (tail !== null) node.columns = splitTopLevel(tail.inner).map(stripType);
      node.stateful = true;
      break;
    }
    case 'distinct':
      node.stateful = true;
      break;
    case 'output': {
      const key = after(rest, 'key');
      if (key !== null) node.key = splitTopLevel(key.inner);
      const cols = lastBracket >= 0 ? bracketed(rest, lastBracket) : null;
      if (cols !== null) node.columns = splitTopLevel(cols.inner).map(stripType);
      node.stateful = true;
      break;
    }
  }
  const state = /\bstate (\S+)/.exec(rest);
  if (state !== null) node.state = state[1] as string;
  return node as Omit<GraphNode, 'inputs'>;
}

export function parseDataflowText(text: string): DataflowGraph {
  const lines = text.split('\n');
  const head = /^Dataflow for (\S+)(?: \(fingerprint ([^)]*)\))?/.exec(lines[0] ?? '');
  const nodes = new Map<number, GraphNode>();
  const stack: number[] = [];
  let output: number | null = null;
  for (const line of lines.slice(1)) {
    const m = /^( *)n(\d+) (\S+)\s*(.*)$/.exec(line);
    if (m === null) continue;
    const depth = Math.max(0, Math.floor((m[1] as string).length / 2) - 1);
    const id = Number(m[2]);
    if (!nodes.has(id))
      nodes.set(id, { ...parseLine(id, m[3] as string, m[4] as string, line.trim()), inputs: [] });
    stack.length = depth;
    const parent = depth > 0 ? stack[depth - 1] : undefined;
    if (parent !== undefined) {
      const p = nodes.get(parent);
      if (p !== undefined && !p.inputs.includes(id)) p.inputs.push(id);
    } else if (output === null) output = id;
    stack[depth] = id;
  }
  // Inputs first: order by the longest path from a leaf.
  const level = new Map<number, number>();
  const levelOf = (id: number, seen: Set<number>): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const n = nodes.get(id);
    const l =
      n === undefined || n.inputs.length === 0 ? 0 : 1 + Math.max(...n.inputs.map((i) => levelOf(i, seen)));
    level.set(id, l);
    return l;
  };
  const ordered = [...nodes.values()].sort(
    (a, b) => levelOf(a.id, new Set()) - levelOf(b.id, new Set()) || a.id - b.id,
  );
  return { view: head?.[1] ?? '', fingerprint: head?.[2] ?? null, nodes: ordered, output };
}
