// Which hosts a source or sink may connect to. `brokers` comes from SQL, so without a bound anyone
// who may create a source could make the server connect anywhere it can reach (private networks,
// cloud metadata addresses). The allow-list is `--connector-hosts`; by default loopback plus the
// broker hosts of the connectors the server already had at start (so a restart never locks out
// an existing source). Pure: the engine calls `refused` when a CREATE is executed (via the hook the
// server installs), the connector manager before it connects.
import { BlockList, isIP } from 'node:net';

/** One allowed host: a name or address (any port, or one), or a CIDR block of addresses. */
type Rule =
  | { readonly kind: 'any' }
  | { readonly kind: 'name'; readonly name: string; readonly port: number | null }
  | { readonly kind: 'address'; readonly list: BlockList; readonly port: number | null }
  | { readonly kind: 'block'; readonly text: string };

/** Loopback: what the default always allows. */
export const LOOPBACK_CONNECTOR_HOSTS: readonly string[] = ['localhost', '127.0.0.0/8', '::1'];

function normalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** `host:port` (IPv6 in brackets) → its parts; the same rule the `brokers` option is validated with. */
export function splitBroker(broker: string): { host: string; port: number } | null {
  const m = /^([^\s:[\]]+|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(broker.trim());
  if (m === null) return null;
  return { host: (m[1] ?? '').replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

function familyOf(address: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

/** Parses one `--connector-hosts` entry; throws an Error naming it when malformed. */
function parseRule(raw: string): Rule {
  const entry = raw.trim();
  if (entry === '*') return { kind: 'any' };
  const cidr = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(entry);
  if (cidr !== null) {
    const family = familyOf(cidr[1] ?? '');
    const bits = Number(cidr[2]);
    if (family === null || bits > (family === 'ipv4' ? 32 : 128)) {
      throw new Error(`invalid address block "${raw}"`);
    }
    return { kind: 'block', text: entry };
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/@]+)(?::(\d{1,5}))?$/.exec(entry);
  // A bare IPv6 address has colons of its own: it takes no port.
  const bareV6 = familyOf(entry) === 'ipv6';
  const host = bareV6 ? entry : (m?.[1] ?? '').replace(/^\[|\]$/g, '');
  const port = bareV6 || m?.[2] === undefined ? null : Number(m[2]);
  if ((!bareV6 && m === null) || host === '' || (port !== null && (port < 1 || port > 65535))) {
    throw new Error(
      `invalid connector host "${raw}" (expected host, host:port, an address block such as 10.0.0.0/8, or *)`,
    );
  }
  const family = familyOf(host);
  if (family !== null) {
    // Matched through a BlockList, so every spelling of an IPv6 address (and IPv4-mapped ones) agrees.
    const list = new BlockList();
    list.addAddress(host, family);
    return { kind: 'address', list, port };
  }
  if (!/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/.test(host)) {
    throw new Error(`invalid connector host "${raw}"`);
  }
  return { kind: 'name', name: normalName(host), port };
}

/** Validates `--connector-hosts` entries (throws an Error naming a malformed one). */
export function parseConnectorHosts(entries: readonly string[]): void {
  for (const e of entries) parseRule(e);
}

export class ConnectorHosts {
  private readonly rules: readonly Rule[];
  private readonly blocks = new BlockList();
  /** How the list came about, for messages. */
  readonly configured: boolean;

  /**
   * `configured`: the `--connector-hosts` entries, or null for the default — loopback and the hosts
   * of `brokersAtStart` (the connectors recovered at start).
   */
  static create(configured: readonly string[] | null, brokersAtStart: readonly string[]): ConnectorHosts {
    if (configured !== null) return new ConnectorHosts(configured, true);
    const hosts = brokersAtStart.flatMap((b) => {
      const parts = splitBroker(b);
      return parts === null ? [] : [parts.host];
    });
    return new ConnectorHosts([...LOOPBACK_CONNECTOR_HOSTS, ...new Set(hosts)], false);
  }

  constructor(entries: readonly string[], configured: boolean) {
    this.configured = configured;
    this.rules = entries.map(parseRule);
    for (const r of this.rules) {
      if (r.kind !== 'block') continue;
      const [address, bits] = r.text.split('/');
      const family = familyOf(address ?? '') ?? 'ipv4';
      this.blocks.addSubnet(address ?? '', Number(bits), family);
    }
  }

  /** True when a connection to `host:port` is allowed. */
  allows(host: string, port: number): boolean {
    const name = normalName(host.replace(/^\[|\]$/g, ''));
    const family = familyOf(name);
    for (const r of this.rules) {
      switch (r.kind) {
        case 'any':
          return true;
        case 'name':
          if (family === null && r.name === name && (r.port === null || r.port === port)) return true;
          break;
        case 'address':
          if (family !== null && r.list.check(name, family) && (r.port === null || r.port === port))
            return true;
          break;
        case 'block':
          break;
      }
    }
    return family !== null && this.blocks.check(name, family);
  }

  /** The first broker (`host:port`) of `brokers` that is not allowed, or null when all are. */
  refused(brokers: readonly string[]): string | null {
    for (const b of brokers) {
      const parts = splitBroker(b);
      if (parts === null || !this.allows(parts.host, parts.port)) return b;
    }
    return null;
  }

  /** The hint for a refused broker. */
  hintFor(broker: string): string {
    const host = splitBroker(broker)?.host ?? broker;
    return this.configured
      ? `add "${host}" to --connector-hosts to let connectors reach it`
      : `connectors may reach loopback and the brokers of the connectors present at start; start the server with --connector-hosts ${host} (or a list) to allow it`;
  }
}
