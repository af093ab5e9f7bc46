/**
 * The hand-written references the service is measured against (bench/README.md#scenarios): express
 * + helmet + jsonwebtoken with a cached KeyObject + a pg Pool under the same runtime role, the same
 * database and the same token, and none of the service's machinery (no contract, no rate limit,
 * no logging).
 *
 * - `reference-tenant`: `select * from app_tenant_facts(…)` per request, one round trip
 *   (what GET /api/tenant does at its least);
 * - `reference-boards`: BEGIN, app_tenant_facts, the boards page query, COMMIT
 *   (what GET /api/boards does at its least);
 * - `reference-memory`: decisions from memory written by hand (what the gateway decision and
 *   GET /api/tenant do at their least when memory answers them): the rows of app_tenant_facts in
 *   a Map keyed by its arguments, filled on a miss, and dropped by tenant (or all of them) on a
 *   LISTEN of the channel the service's triggers notify (src/db/fact-notifications.ts). Memory is
 *   answered from only while the LISTEN connection is up, and a row read while a notification
 *   arrived is not kept (the rules of docs/architecture.md "Decisions from memory"), so the
 *   reference stays correct: a member removed is refused once the removal's notification is in.
 *   It neither provisions nor rate-limits nor logs.
 */
import type crypto from 'node:crypto';
import express from 'express';
import helmet from 'helmet';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { DECISION_FACTS_CHANNEL } from '../src/db/fact-notifications';

export const REFERENCE_KINDS = ['reference-tenant', 'reference-boards', 'reference-memory'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

const ENTER = "select * from app_tenant_facts($1, null, null, null, $2, $3, '{}')";
const BOARDS = `select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts
  from boards where tenant_id = $1 order by created_at, id limit 101`;

interface Claims {
  sub: string;
  iss?: string;
  email?: string;
  name?: string;
  tenant?: string;
}

interface FactsRow {
  tenant_id: string;
  tenant_name: string;
  tenant_slug: string;
  tenant_settings: unknown;
  tenant_status: string;
  user_id: string | null;
  user_role: string | null;
  role_permissions: Record<string, string[]> | null;
}

/** The rows of app_tenant_facts by (tenant claim, issuer, subject), dropped on the service's notifications. */
async function factsMemory(pool: pg.Pool, databaseUrl: string) {
  const rows = new Map<string, FactsRow | null>();
  const byTenant = new Map<string, Set<string>>();
  /** Bumped by every drop: a row read across a drop is not kept. */
  let generation = 0;
  let listening = false;
  const dropAll = () => {
    generation++;
    rows.clear();
    byTenant.clear();
  };
  const listener = new pg.Client({ connectionString: databaseUrl, keepAlive: true });
  const down = () => {
    listening = false;
    dropAll();
  };
  listener.on('error', down);
  listener.on('end', down);
  listener.on('notification', (m) => {
    const payload = m.payload ?? '';
    if (payload.startsWith('heartbeat ')) return; // the service instances' own liveness checks
    const tenantId = payload.slice(0, payload.indexOf(' ') >>> 0);
    if (tenantId === '*') return dropAll();
    generation++;
    const keys = byTenant.get(tenantId);
    if (!keys) return;
    for (const k of keys) rows.delete(k);
    byTenant.delete(tenantId);
  });
  await listener.connect();
  await listener.query(`LISTEN ${DECISION_FACTS_CHANNEL}`);
  listening = true;
  return {
    async get(tenant: string | null, issuer: string, subject: string): Promise<FactsRow | null> {
      const key = `${tenant ?? ''}\n${issuer}\n${subject}`;
      if (listening && rows.has(key)) return rows.get(key)!;
      const seen = generation;
      const r = await pool.query<FactsRow>(ENTER, [tenant, issuer, subject]);
      const row = r.rows[0] ?? null;
      // No tenant found is never kept (a tenant created later must be found).
      if (listening && row && seen === generation) {
        rows.set(key, row);
        let keys = byTenant.get(row.tenant_id);
        if (!keys) byTenant.set(row.tenant_id, (keys = new Set()));
        keys.add(key);
      }
      return row;
    },
    close: async () => {
      listener.removeListener('end', down);
      await listener.end().catch(() => undefined);
    },
  };
}

export async function buildReferenceApp(kind: ReferenceKind, opts: { databaseUrl: string; publicKey: crypto.KeyObject; issuer: string }): Promise<{ app: express.Express; close: () => Promise<void> }> {
  // The runtime role from the connection's start (no extra round trip), pool size as the service's.
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10, options: '-c role=tenant_service_app' });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(helmet());

  const verify = (req: express.Request): Claims | null => {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return null;
    try {
      return jwt.verify(h.slice(7), opts.publicKey, { algorithms: ['RS256'], issuer: opts.issuer }) as Claims;
    } catch {
      return null;
    }
  };

  if (kind === 'reference-memory') {
    const memory = await factsMemory(pool, opts.databaseUrl);
    app.get('/api/tenant/decision', async (req, res) => {
      const c = verify(req);
      if (!c) return void res.status(401).json({ error: 'Unauthorized' });
      try {
        const row = await memory.get(c.tenant ?? null, c.iss ?? opts.issuer, c.sub);
        if (!row || row.tenant_status !== 'active' || !row.user_id || !row.user_role) return void res.status(403).json({ error: 'Forbidden' });
        const permissions = row.role_permissions?.[row.user_role] ?? [];
        res.set({
          'X-Tenant-Id': row.tenant_id,
          'X-Tenant-Slug': row.tenant_slug,
          'X-Tenant-Role': row.user_role,
          'X-Tenant-Permissions': permissions.join(' '),
          'X-User-Id': row.user_id,
          'X-User-Subject': c.sub,
          'X-User-Issuer': c.iss ?? opts.issuer,
          'Cache-Control': 'no-store',
        });
        res.json({ tenant_id: row.tenant_id, tenant_slug: row.tenant_slug, tenant_role: row.user_role, permissions, user_id: row.user_id, user_subject: c.sub });
      } catch {
        res.status(500).json({ error: 'Internal error' });
      }
    });
    app.get('/api/tenant', async (req, res) => {
      const c = verify(req);
      if (!c) return void res.status(401).json({ error: 'Unauthorized' });
      try {
        const row = await memory.get(c.tenant ?? null, c.iss ?? opts.issuer, c.sub);
        if (!row) return void res.status(404).json({ error: 'Tenant not found' });
        res.json({ tenant: { tenant_id: row.tenant_id, name: row.tenant_name, slug: row.tenant_slug, settings: row.tenant_settings, status: row.tenant_status }, membership: { user_id: row.user_id, role: row.user_role } });
      } catch {
        res.status(500).json({ error: 'Internal error' });
      }
    });
    return {
      app,
      close: async () => {
        await memory.close();
        await pool.end();
      },
    };
  }
  app.get('/api/tenant', async (req, res) => {
    const c = verify(req);
    if (!c) return void res.status(401).json({ error: 'Unauthorized' });
    try {
      const r = await pool.query(ENTER, [c.tenant ?? null, c.iss ?? opts.issuer, c.sub]);
      const row = r.rows[0];
      if (!row) return void res.status(404).json({ error: 'Tenant not found' });
      res.json({ tenant: { tenant_id: row.tenant_id, name: row.tenant_name, slug: row.tenant_slug, settings: row.tenant_settings, status: row.tenant_status }, membership: { user_id: row.user_id, role: row.user_role } });
    } catch {
      res.status(500).json({ error: 'Internal error' });
    }
  });

  app.get('/api/boards', async (req, res) => {
    const c = verify(req);
    if (!c) return void res.status(401).json({ error: 'Unauthorized' });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const r = await client.query(ENTER, [c.tenant ?? null, c.iss ?? opts.issuer, c.sub]);
      const row = r.rows[0];
      if (!row) {
        await client.query('ROLLBACK');
        return void res.status(404).json({ error: 'Tenant not found' });
      }
      const boards = await client.query(BOARDS, [row.tenant_id]);
      await client.query('COMMIT');
      res.json({
        boards: boards.rows.slice(0, 100).map((b: Record<string, unknown>) => ({ board_id: b.id, name: b.name, description: b.description, created_by: b.created_by, created_at: (b.created_at as Date).toISOString() })),
        next_cursor: null,
      });
    } catch {
      await client.query('ROLLBACK').catch(() => undefined);
      res.status(500).json({ error: 'Internal error' });
    } finally {
      client.release();
    }
  });

  return { app, close: () => pool.end() };
}
