/**
 * The hand-written references the service is measured against (bench/README.md#scenarios): express
 * + helmet + jsonwebtoken with a cached KeyObject + a pg Pool under the same runtime role, the same
 * database and the same token, and none of the service's machinery (no contract, no rate limit,
 * no logging).
 *
 * - `reference-tenant`: `select * from app_tenant_facts(…)` per request, one round trip
 *   (what GET /api/tenant does at its least);
 * - `reference-boards`: BEGIN, app_tenant_facts, the boards page query, COMMIT
 *   (what GET /api/boards does at its least).
 */
import type crypto from 'node:crypto';
import express from 'express';
import helmet from 'helmet';
import jwt from 'jsonwebtoken';
import pg from 'pg';

export type ReferenceKind = 'reference-tenant' | 'reference-boards';

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

export function buildReferenceApp(kind: ReferenceKind, opts: { databaseUrl: string; publicKey: crypto.KeyObject; issuer: string }): { app: express.Express; close: () => Promise<void> } {
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

  void kind;
  return { app, close: () => pool.end() };
}
