/**
 * The decision facts an instance holds in memory (docs/architecture.md "Decisions from memory"):
 * the facts statement's rows keyed by its arguments, indexed by tenant for invalidation, bounded
 * in entries and bytes (least recently used goes first). Never stale: nothing is answered unless
 * the change listener is listening, everything is dropped when it (re)connects, and a row read
 * from the database is kept only if no change of its tenant (nor a drop of everything) arrived
 * while it was read: a row read before a change and stored after it would otherwise outlive it.
 */
import type { ListenerState } from '../db/fact-notifications';

/** All rows together may hold this much (a rough size: their JSON, twice for UTF-16). */
export const FACTS_MEMORY_MAX_BYTES = 128 * 1024 * 1024;
/** A row larger than this (a tenant with huge settings) is read from the database each time. */
const MAX_ENTRY_BYTES = 64 * 1024;
/** Tenants whose last change is remembered for reads in flight; past it, in-flight reads are not kept. */
const MAX_TRACKED_CHANGES = 10_000;

/** Why memory decisions are off, or `on`. */
export type FactsMemoryMode = 'on' | 'disabled' | 'pooler_without_listen_url';

export interface FactsMemoryObserver {
  /** A lookup answered from memory (`memory`) or from the database (`database`). */
  lookup?(from: 'memory' | 'database'): void;
  /** A change dropped entries: seconds from the writing transaction's start to the drop. */
  invalidated?(lagSeconds: number | null): void;
  listenerState?(state: ListenerState): void;
}

interface Entry<V> {
  readonly tenantId: string;
  readonly value: V;
  readonly bytes: number;
}

/** A read in flight: its start, to compare with the changes that arrive meanwhile. */
export type ReadTicket = number;

export class FactsMemory<V extends { readonly tenant: { readonly id: string } }> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly byTenant = new Map<string, Set<string>>();
  private bytes = 0;
  /** Bumped by every change; a change of tenant T records it in lastChange[T]. */
  private seq = 0;
  private readonly lastChange = new Map<string, number>();
  /** The seq of the last drop of everything (reconnect, '*', a local write). */
  private droppedAt = 0;
  private listener: ListenerState = 'connecting';

  constructor(
    private readonly maxEntries: number,
    private readonly observer: FactsMemoryObserver = {},
    private readonly maxBytes = FACTS_MEMORY_MAX_BYTES,
  ) {}

  /** True when rows may be answered from memory now. */
  get usable(): boolean {
    return this.listener === 'listening';
  }

  get state(): ListenerState {
    return this.listener;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The row for `key`, or undefined (not held, or memory not usable now). */
  get(key: string): V | undefined {
    if (!this.usable) return undefined;
    const e = this.entries.get(key);
    if (!e) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** Call before reading a row from the database; pass the ticket to `keep`. */
  begin(): ReadTicket {
    return this.seq;
  }

  /** Keeps a row read since `ticket`, unless something that may change it arrived meanwhile. */
  keep(key: string, value: V, ticket: ReadTicket): void {
    if (!this.usable || this.droppedAt > ticket || (this.lastChange.get(value.tenant.id) ?? 0) > ticket) return;
    const bytes = 2 * (key.length + JSON.stringify(value).length) + 200;
    if (bytes > MAX_ENTRY_BYTES) return;
    this.remove(key);
    this.entries.set(key, { tenantId: value.tenant.id, value, bytes });
    let keys = this.byTenant.get(value.tenant.id);
    if (!keys) this.byTenant.set(value.tenant.id, (keys = new Set()));
    keys.add(key);
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
  }

  /** A committed change of `tenantId` ('*': of everything) arrived from the listener. */
  changed(tenantId: string, committedAtMs: number | null): void {
    this.forget(tenantId);
    this.observer.invalidated?.(committedAtMs === null ? null : Math.max(0, (Date.now() - committedAtMs) / 1000));
  }

  /** Drops what is held of `tenantId` ('*': everything), and its reads in flight. */
  forget(tenantId: string): void {
    this.seq++;
    if (tenantId === '*') this.dropAll();
    else {
      if (this.lastChange.size >= MAX_TRACKED_CHANGES) {
        // Forget the per-tenant record, conservatively: reads in flight are not kept.
        this.lastChange.clear();
        this.droppedAt = this.seq;
      }
      this.lastChange.set(tenantId, this.seq);
      for (const key of this.byTenant.get(tenantId) ?? []) this.remove(key);
    }
  }

  /** Drops everything held, and every read in flight (a local write, a reconnect). */
  dropAll(): void {
    this.seq++;
    this.droppedAt = this.seq;
    this.lastChange.clear();
    this.entries.clear();
    this.byTenant.clear();
    this.bytes = 0;
  }

  /** The listener's state; a fresh LISTEN drops everything before memory is used again. */
  listenerState(state: ListenerState, fresh: boolean): void {
    if (state !== 'listening' || fresh) this.dropAll();
    this.listener = state;
    this.observer.listenerState?.(state);
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
    const keys = this.byTenant.get(e.tenantId);
    keys?.delete(key);
    if (keys?.size === 0) this.byTenant.delete(e.tenantId);
  }
}
