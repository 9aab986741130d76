// Request admission: which requests may reach a route at all. A web page on another site must not be
// able to drive the server — neither by a cross-site POST or WebSocket (its Origin is foreign) nor by
// DNS rebinding (its Host is a name that is not this server's) — so every request's Host, and the
// Origin of every state-changing request and WebSocket upgrade, is checked against the server's own
// names plus the configured allow-lists. Pure rules here; `registerRequestGuard` wires them into
// fastify's onRequest stage, before any body is read.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError } from '../common/errors.ts';

/** The address and port the server listens on (null before it listens). */
export interface BoundAddress {
  readonly address: string;
  readonly port: number;
}

export interface AdmissionOptions {
  /**
   * Extra names this server answers to (`name`, `name:port`, `[v6]:port`), beyond its own (loopback
   * names and addresses and the bound address); `*` turns the Host check off.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Extra origins (`scheme://host[:port]`) allowed to send state-changing requests and open
   * WebSockets, beyond the server's own (the origins of its own names).
   */
  readonly allowedOrigins?: readonly string[];
}

interface HostEntry {
  readonly name: string;
  /** null: any port. */
  readonly port: number | null;
}

interface HostPort {
  readonly name: string;
  readonly port: number;
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (`::ffff:127.x.y.z`). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (isIP(a) === 4) return a.startsWith('127.');
  if (isIP(a) !== 6) return false;
  if (a === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(a)) return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped !== null && (mapped[1] ?? '').startsWith('127.');
}

/** 0.0.0.0 or :: — every interface. */
export function isWildcardAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '');
  return a === '0.0.0.0' || a === '::' || /^(0{1,4}:){7}0{1,4}$/.test(a);
}

/** A name as compared: lowercase, no IPv6 brackets, no trailing dot. */
function normalName(name: string): string {
  return name
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** `host[:port]` (IPv6 in brackets) → its parts; null when it is not of that shape. */
export function splitHostPort(text: string): { name: string; port: number | null } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/@]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (m === null) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  const name = normalName(m[1] ?? '');
  if (name === '') return null;
  return { name, port };
}

/** Validates `--allowed-hosts` entries; throws an Error naming the bad one. */
export function parseAllowedHosts(entries: readonly string[]): { any: boolean; hosts: HostEntry[] } {
  let any = false;
  const hosts: HostEntry[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '*') {
      any = true;
      continue;
    }
    const parts = splitHostPort(entry);
    if (parts === null)
      throw new Error(`invalid host "${raw}" (expected name, name:port or [v6]:port, or *)`);
    hosts.push(parts);
  }
  return { any, hosts };
}

/** `scheme://host[:port]` in its normal form (lowercase, default port dropped); null if not one. */
export function normalOrigin(text: string): string | null {
  if (!/^https?:\/\/[^/?#]+$/i.test(text.trim())) return null;
  try {
    const url = new URL(text.trim());
    return `${url.protocol}//${url.host}`;
  } catch {
    return null;
  }
}

/** Validates `--allowed-origins` entries; throws an Error naming the bad one. */
export function parseAllowedOrigins(entries: readonly string[]): string[] {
  return entries.map((raw) => {
    const origin = normalOrigin(raw);
    if (origin === null)
      throw new Error(`invalid origin "${raw}" (expected http://host[:port] or https://…)`);
    return origin;
  });
}

const INTERFACES_TTL_MS = 5000;

export class RequestGuard {
  private readonly anyHost: boolean;
  private readonly extraHosts: readonly HostEntry[];
  private readonly extraOrigins: ReadonlySet<string>;
  private interfaces: { at: number; addresses: ReadonlySet<string> } | null = null;

  constructor(
    options: AdmissionOptions,
    private readonly bound: () => BoundAddress | null,
  ) {
    const hosts = parseAllowedHosts(options.allowedHosts ?? []);
    this.anyHost = hosts.any;
    this.extraHosts = hosts.hosts;
    this.extraOrigins = new Set(parseAllowedOrigins(options.allowedOrigins ?? []));
  }

  /** A request's Host header: null when it names this server, else the error to answer. */
  checkHost(header: string | undefined): SluiceError | null {
    // No Host at all (HTTP/1.0 tools) cannot come from a rebound name; browsers always send one.
    if (header === undefined || this.anyHost) return null;
    const parts = splitHostPort(header);
    if (parts !== null && this.isOwnName({ name: parts.name, port: parts.port ?? 80 })) return null;
    return new SluiceError('FORBIDDEN_HOST', `host "${header.slice(0, 200)}" is not a name of this server`, {
      hint: 'the server answers to its loopback names and bound address; add other names with --allowed-hosts',
    });
  }

  /** An Origin header: true when it is the server's own origin or an allowed one. */
  originAllowed(header: string): boolean {
    const origin = normalOrigin(header);
    if (origin === null) return false; // "null" (sandboxed frames, file:), or garbage
    if (this.extraOrigins.has(origin)) return true;
    const url = new URL(origin);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return this.isOwnName({ name: normalName(url.hostname), port });
  }

  /** The Origin of a state-changing request or upgrade: null when allowed (or absent), else the error. */
  checkOrigin(header: string | undefined): SluiceError | null {
    // No Origin: not a browser's cross-site request (curl, Node clients, same-origin GETs).
    if (header === undefined || this.originAllowed(header)) return null;
    return new SluiceError('FORBIDDEN_ORIGIN', `origin "${header.slice(0, 200)}" may not use this server`, {
      hint: "requests from web pages are accepted from the server's own origin and those listed in --allowed-origins",
    });
  }

  /**
   * The server's own names: `localhost` (and `*.localhost`), loopback addresses and the bound
   * address, at the bound port — for a wildcard bind every interface address and the machine's host
   * name — plus the names of --allowed-hosts (at their port, or any).
   */
  private isOwnName(target: HostPort): boolean {
    for (const e of this.extraHosts) {
      if (e.name === target.name && (e.port === null || e.port === target.port)) return true;
    }
    const bound = this.bound();
    if (bound !== null && target.port !== bound.port) return false;
    const name = target.name;
    if (name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name)) return true;
    if (bound === null) return false;
    const address = normalName(bound.address);
    if (isWildcardAddress(address)) {
      return name === normalName(hostname()) || this.interfaceAddresses().has(name);
    }
    return name === address;
  }

  private interfaceAddresses(): ReadonlySet<string> {
    const now = Date.now();
    if (this.interfaces === null || now - this.interfaces.at > INTERFACES_TTL_MS) {
      const addresses = new Set<string>();
      for (const list of Object.values(networkInterfaces())) {
        for (const i of list ?? []) addresses.add(normalName(i.address.replace(/%.*$/, '')));
      }
      this.interfaces = { at: now, addresses };
    }
    return this.interfaces.addresses;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CORS_METHODS = 'GET, HEAD, POST, OPTIONS';
const CORS_HEADERS = 'content-type, authorization';

export interface GuardWiring {
  /** Routes (fastify URL patterns) that accept a WebSocket upgrade. */
  readonly websocketRoutes: ReadonlySet<string>;
  /** Answers with the API's error shape (and counts it). */
  readonly sendError: (reply: FastifyReply, error: SluiceError) => FastifyReply;
}

/**
 * Adds the admission checks as an onRequest hook of `app` (register it first, so that it also covers
 * the routes plugins add): Host, then CORS preflights, then the
 * Origin of state-changing requests and upgrades, then upgrades of routes that are not WebSocket
 * routes (refused with an HTTP answer, never a 101).
 */
export function registerRequestGuard(app: FastifyInstance, guard: RequestGuard, wiring: GuardWiring): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    // Set by node's parser for a request that asks to switch protocols (a WebSocket handshake).
    const upgrade = (request.raw as IncomingMessage & { upgrade?: boolean }).upgrade === true;
    const refuse = (error: SluiceError): void => {
      // A refused body is never read, so the connection is not reused.
      reply.header('connection', 'close');
      if (upgrade) {
        // Node handed an upgrade's socket over whole: nothing closes it after the answer but us.
        const socket = request.raw.socket;
        reply.raw.once('finish', () => {
          socket.end();
          setTimeout(() => socket.destroy(), 1000).unref();
        });
      }
      wiring.sendError(reply, error);
    };
    const hostError = guard.checkHost(request.headers.host);
    if (hostError !== null) return refuse(hostError);
    const origin = request.headers.origin;
    if (origin !== undefined) reply.header('vary', 'Origin');
    if (request.method === 'OPTIONS' && !upgrade) {
      if (origin !== undefined && !guard.originAllowed(origin)) {
        return refuse(guard.checkOrigin(origin) as SluiceError);
      }
      // A preflight from an allowed origin (or a plain OPTIONS): say what may be sent, nothing more.
      if (origin !== undefined) {
        reply
          .header('access-control-allow-origin', origin)
          .header('access-control-allow-methods', CORS_METHODS)
          .header('access-control-allow-headers', CORS_HEADERS)
          .header('access-control-max-age', '600');
      }
      reply.header('allow', CORS_METHODS).code(204).send();
      return;
    }
    if (upgrade || !SAFE_METHODS.has(request.method)) {
      const originError = guard.checkOrigin(origin);
      if (originError !== null) return refuse(originError);
    }
    if (origin !== undefined && guard.originAllowed(origin)) {
      reply.header('access-control-allow-origin', origin);
    }
    if (upgrade) {
      const url = request.routeOptions.url;
      if (url === undefined) {
        return refuse(
          new SluiceError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`),
        );
      }
      if (!wiring.websocketRoutes.has(url) || request.method !== 'GET') {
        return refuse(
          new SluiceError(
            'INVALID_REQUEST',
            `invalid request: ${request.method} ${url} does not accept a WebSocket upgrade`,
            {
              hint: 'WebSocket subscriptions are at GET /v1/views/{name}/subscribe',
            },
          ),
        );
      }
    }
    done();
  });
}
