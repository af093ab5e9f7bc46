/**
 * Metrics of decisions answered from memory (docs/architecture.md "Decisions from memory"):
 *
 *   tenant_service_decision_facts_lookups_total{from}   memory | database           counter
 *   tenant_service_decision_facts_invalidation_lag_seconds  from the writing transaction's
 *       start to the drop on this instance (an upper bound of the lag from its commit)  histogram
 *   tenant_service_decision_facts_listener_state{state} 1 for the current state      gauge
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ListenerState } from '../db/fact-notifications';
import type { FactsMemoryObserver } from '../tenancy/facts-memory';

const LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const STATES: readonly ListenerState[] = ['connecting', 'listening', 'behind', 'down'];

/** Registers the metrics in `registry` and returns the observer the facts memory reports to. */
export function registerFactsMemoryMetrics(registry: Registry): FactsMemoryObserver {
  const lookups = new Counter({
    name: 'tenant_service_decision_facts_lookups_total',
    help: 'Tenant facts of admitted-path requests (decision, GET /api/tenant) answered from memory or from the database.',
    labelNames: ['from'] as const,
    registers: [registry],
  });
  for (const from of ['memory', 'database'] as const) lookups.inc({ from }, 0);
  const lag = new Histogram({
    name: 'tenant_service_decision_facts_invalidation_lag_seconds',
    help: "Seconds from a writing transaction's start to this instance dropping the facts it changed.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  const state = new Gauge({
    name: 'tenant_service_decision_facts_listener_state',
    help: 'The change listener of memory decisions: 1 for its current state (connecting, listening, behind, down); all 0 when memory decisions are off.',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  for (const s of STATES) state.set({ state: s }, 0);
  return {
    lookup: (from) => lookups.inc({ from }),
    invalidated: (seconds) => {
      if (seconds !== null) lag.observe(seconds);
    },
    listenerState: (current) => {
      for (const s of STATES) state.set({ state: s }, s === current ? 1 : 0);
    },
  };
}
