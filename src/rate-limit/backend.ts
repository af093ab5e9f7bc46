/**
 * Where the rate-limit counters live (docs/operations.md#rate-limits): one store per counter of
 * the contract, in this process (express-rate-limit's MemoryStore) unless Redis is configured
 * (./redis.ts).
 */
import { MemoryStore, type Store } from 'express-rate-limit';

export interface RateLimitBackend {
  /** The store of one counter; `counter` names its key namespace. */
  makeStore(counter: string): Store;
  /** Settles when the stores have finished initialising (express-rate-limit does not wait). */
  initialized(): Promise<void>;
  storeState(): 'memory' | 'redis' | 'degraded';
  close(): Promise<void>;
}

/** Counters in this process only: each instance counts on its own. */
export function memoryBackend(): RateLimitBackend {
  const stores: MemoryStore[] = [];
  return {
    makeStore() {
      const store = new MemoryStore();
      stores.push(store);
      return store;
    },
    initialized: async () => undefined,
    storeState: () => 'memory',
    async close() {
      for (const s of stores) s.shutdown();
    },
  };
}
