/**
 * The change notifications of decision facts (docs/architecture.md "Decisions from memory"):
 * one session connection per instance LISTENs on the channel the triggers of migration 017
 * notify. The connection also proves itself: every HEARTBEAT_MS it notifies the channel and must
 * hear that notification back, so a silent connection (a pooler that cannot carry LISTEN, a
 * dead network path) is "behind" and then "down", never trusted.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Client } from 'pg';

/** The channel of migration 017's trigger function. */
export const DECISION_FACTS_CHANNEL = 'tenant_service_decision_facts';
/** application_name of the listener's connection (operators and tests find it by this). */
export const LISTENER_APPLICATION_NAME = 'tenant-service-listener';

const HEARTBEAT_MS = 250;
/** A heartbeat unheard this long: possibly behind (answer from the database). */
const BEHIND_MS = 500;
/** Unheard this long: the connection is given up and made again. */
const DEAD_MS = 5_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/** A `sync` unanswered this long answers false (the caller then drops conservatively). */
const SYNC_MAX_MS = 1_000;

export type ListenerState = 'connecting' | 'listening' | 'behind' | 'down';

export interface FactNotificationSink {
  /** The listener's state changed; `listening` follows a fresh LISTEN or a heartbeat heard again. */
  state(state: ListenerState, fresh: boolean): void;
  /** A write committed: `tenantId` ('*' for platform-wide facts), its transaction's start (ms). */
  changed(tenantId: string, committedAtMs: number | null): void;
}

export interface FactListener {
  stop(): Promise<void>;
  /**
   * Resolves true once every notification committed before the call has been handed to the
   * sink (a notification sent after the call was heard back: PostgreSQL delivers in commit
   * order); false when that cannot be shown (not listening, dropped, or not heard in time).
   * Callers waiting at once share one round trip; at most one is in flight.
   */
  sync(): Promise<boolean>;
  /** The listener connection's backend pid (null when not connected). */
  backendPid(): number | null;
}

/** Starts the listener; it reconnects by itself until stopped. */
export function startFactListener(opts: { url: string; logger: Logger; sink: FactNotificationSink }): FactListener {
  const { logger, sink } = opts;
  const me = randomUUID();
  let stopped = false;
  let client: Client | null = null;
  let pid: number | null = null;
  let delay = RECONNECT_MIN_MS;
  let timer: NodeJS.Timeout | null = null;
  let heartbeat = 0;
  let sentAt = new Map<number, number>();
  let state: ListenerState = 'connecting';
  /** Callers of `sync`: resolved by any heartbeat numbered above `after`. */
  let waiting: Array<{ after: number; since: number; resolve: (ok: boolean) => void }> = [];
  /** The heartbeat sent for `sync` and not heard yet (null: none in flight). */
  let syncBeat: number | null = null;

  const settle = (ok: boolean, heard = Infinity) => {
    const now = Date.now();
    const keep: typeof waiting = [];
    for (const w of waiting) {
      if (w.after < heard) w.resolve(ok);
      else if (now - w.since > SYNC_MAX_MS) w.resolve(false);
      else keep.push(w);
    }
    waiting = keep;
  };

  const setState = (s: ListenerState, fresh = false) => {
    if (s === state && !fresh) return;
    state = s;
    sink.state(s, fresh);
  };

  const drop = (c: Client, why: string) => {
    if (client !== c) return;
    client = null;
    pid = null;
    sentAt = new Map();
    syncBeat = null;
    settle(false);
    if (timer) clearInterval(timer);
    timer = null;
    c.removeAllListeners('notification');
    c.on('error', () => undefined); // late errors of a dropped connection
    void c.end().catch(() => undefined);
    setState('down');
    if (stopped) return;
    logger.warn({ reason: why, retry_ms: delay }, 'Decision facts listener disconnected: answering decisions from the database');
    setTimeout(connect, delay).unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  const onNotification = (c: Client, payload: string) => {
    const [what, a, b] = payload.split(' ');
    if (what === 'heartbeat') {
      if (a !== me) return;
      const sent = sentAt.get(Number(b));
      if (sent === undefined) return;
      // Heard: every notification committed before it was sent has been delivered.
      for (const k of [...sentAt.keys()]) if (k <= Number(b)) sentAt.delete(k);
      if (state === 'behind' && client === c) setState('listening');
      settle(true, Number(b));
      if (syncBeat !== null && Number(b) >= syncBeat) {
        syncBeat = null;
        if (waiting.length > 0 && client === c) send(c, true);
      }
      return;
    }
    const at = Number(a);
    sink.changed(what!, Number.isFinite(at) ? at * 1000 : null);
  };

  const send = (c: Client, forSync: boolean) => {
    const n = ++heartbeat;
    sentAt.set(n, Date.now());
    if (forSync) syncBeat = n;
    c.query('select pg_notify($1, $2)', [DECISION_FACTS_CHANNEL, `heartbeat ${me} ${n}`]).catch((err: Error) => drop(c, err.message));
  };

  const beat = (c: Client) => {
    const now = Date.now();
    const oldest = Math.min(...sentAt.values());
    if (now - oldest > DEAD_MS) return drop(c, 'heartbeat unheard');
    if (now - oldest > BEHIND_MS) setState('behind');
    settle(false, -Infinity); // only those waiting past SYNC_MAX_MS
    send(c, false);
  };

  function connect(): void {
    if (stopped) return;
    setState('connecting');
    const c = new Client({ connectionString: opts.url, keepAlive: true, connectionTimeoutMillis: 5_000, application_name: LISTENER_APPLICATION_NAME });
    client = c;
    c.on('error', (err) => drop(c, err.message));
    c.on('end', () => drop(c, 'connection ended'));
    c.on('notification', (m) => onNotification(c, m.payload ?? ''));
    void (async () => {
      try {
        await c.connect();
        const r = await c.query<{ pid: number }>(`LISTEN ${DECISION_FACTS_CHANNEL}; select pg_backend_pid() as pid`);
        const rows = Array.isArray(r) ? (r[1] as { rows: Array<{ pid: number }> }).rows : r.rows;
        if (client !== c) return;
        pid = rows[0]?.pid ?? null;
        delay = RECONNECT_MIN_MS;
        timer = setInterval(() => beat(c), HEARTBEAT_MS);
        timer.unref();
        logger.info({ backend_pid: pid }, 'Decision facts listener listening');
        setState('listening', true);
      } catch (err) {
        drop(c, (err as Error).message);
      }
    })();
  }

  connect();
  return {
    backendPid: () => pid,
    sync() {
      const c = client;
      if (stopped || !c || state !== 'listening') return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        waiting.push({ after: heartbeat, since: Date.now(), resolve });
        if (syncBeat === null) send(c, true);
      });
    },
    async stop() {
      stopped = true;
      const c = client;
      if (c) drop(c, 'stopped');
    },
  };
}
