/**
 * Boards, the sample tenant data (listBoards, createBoard, getBoard): a member creates, lists in
 * pages and reads its tenant's boards; bad bodies are 400s that store nothing; a board of another
 * tenant is a 404, whatever id is sent. Isolation across many shapes: test/isolation/.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection, ownerConnection, tenantWithMember } from '../../helpers/factories';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

async function member() {
  const m = await tenantWithMember('member');
  const as = {
    get: (p: string) => request(t.app).get(p).set('Authorization', `Bearer ${m.token}`).set('X-Tenant', m.tenant.slug),
    post: (p: string) => request(t.app).post(p).set('Authorization', `Bearer ${m.token}`).set('X-Tenant', m.tenant.slug),
  };
  return { ...m, as };
}

describe('boards', () => {
  it('createBoard, then getBoard and listBoards show it with its creator', async () => {
    const m = await member();
    const created = await m.as.post('/api/boards').send({ name: 'Spring campaign', description: 'Q2' }).expect(201);
    expect(created.body).toEqual({ board_id: expect.any(String), name: 'Spring campaign', description: 'Q2', created_by: m.user.id, created_at: expect.any(String) });
    const got = await m.as.get(`/api/boards/${created.body.board_id}`).expect(200);
    expect(got.body).toMatchObject({ board_id: created.body.board_id, name: 'Spring campaign' });
    const listed = await m.as.get('/api/boards').expect(200);
    expect(listed.body.boards.map((b: { board_id: string }) => b.board_id)).toEqual([created.body.board_id]);
  });

  it('listBoards pages with limit and cursor, each board once', async () => {
    const m = await member();
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) await m.as.post('/api/boards').send({ name }).expect(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await m.as.get(`/api/boards?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200);
      expect(page.body.boards.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.boards.map((b: { name: string }) => b.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect([...seen].sort()).toEqual(names);
  });

  it('bad bodies are 400 and store nothing', async () => {
    const m = await member();
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(256) }, { name: 'ok', extra: 1 }, { name: 42 }]) {
      const r = await m.as.post('/api/boards').send(body);
      expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 400, error: 'Validation error' });
    }
    expect(await ownerConnection()('boards').where({ tenant_id: m.tenant.id }).count({ n: '*' }).first()).toEqual({ n: '0' });
  });

  it("another tenant's board, an unknown id and a malformed id are not found or refused, never shown", async () => {
    const a = await member();
    const b = await member();
    const theirs = await b.as.post('/api/boards').send({ name: 'Secret' }).expect(201);
    const r = await a.as.get(`/api/boards/${theirs.body.board_id}`);
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).not.toContain('Secret');
    await a.as.get('/api/boards/00000000-0000-4000-8000-000000000000').expect(404);
    expect((await a.as.get('/api/boards/not-a-uuid')).status).toBe(400);
  });
});
