// Types of broker.mjs for the TypeScript tests and benchmarks that import it.

export declare const KAFKA_VERSION: string;
export declare function kafkaLibsDir(): string;
export declare function kafkaJarsPresent(dir?: string): boolean;
export declare function fetchKafkaJars(options?: { log?: (msg: string) => void }): {
  dir: string;
  downloaded: boolean;
  ms: number;
  bytes: number;
  jars: number;
};
export declare function kafkaPrerequisites(): { ok: boolean; missing: string[] };
export declare function freePort(): Promise<number>;
export declare function newClusterId(): string;

export interface StartBrokerOptions {
  /** The broker's own folder (server.properties, broker.log, log/); a fresh temp dir when absent. */
  dataDir?: string;
  port?: number;
  controllerPort?: number;
  /** Extra or overriding server.properties entries. */
  serverProps?: Record<string, string | number | boolean>;
  timeoutMs?: number;
  /** Do not let the JVM child keep the Node process alive (the caller kills it at exit). */
  unref?: boolean;
  log?: (msg: string) => void;
}

export interface Broker {
  /** Bootstrap address, `127.0.0.1:<port>`. */
  readonly brokers: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly dataDir: string;
  readonly logFile: string;
  /** Milliseconds from spawning the JVM to "Kafka Server started", for the last (re)start. */
  startMs: number;
  readonly pid: number | null;
  readonly running: boolean;
  stop(options?: { graceMs?: number; keepData?: boolean }): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  restart(): Promise<number>;
  logTail(lines?: number): string;
}

export declare function startBroker(options?: StartBrokerOptions): Promise<Broker>;
