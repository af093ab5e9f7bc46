/** What bench/run.ts hands a scenario module, so scenarios need not import run.ts. */
export interface Throughput {
  scenario: string;
  connections: number;
  duration_s: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  ratio_to_ceiling?: number;
}

export type WorkerKind = 'ceiling' | 'service' | 'reference-tenant' | 'reference-boards' | 'reference-memory';

export interface BenchContext {
  log(msg: string): void;
  /** Starts a hand-written server thread of `kind` (never the service: see server-process.ts) on the bench database. */
  startWorker(kind: Exclude<WorkerKind, 'service'>): Promise<{ port: number; stop: () => Promise<void> }>;
  /** autocannon at the run's connection count and duration. */
  load(scenario: string, url: string, headers: Record<string, string>, extra?: Record<string, unknown>): Promise<Throughput>;
  serviceUrl: string;
  /** The service's environment (bench database, data dir, rate limits off, info logs). */
  serviceEnv: Record<string, string>;
  /** A member of bench-co, named by the token's tenant claim. */
  member: Record<string, string>;
}
