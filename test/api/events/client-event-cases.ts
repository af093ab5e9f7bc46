/**
 * The client write operations' cases for the every-write-records-its-event suite
 * (events.test.ts), in their own file: each performs the operation and says which event it must
 * have written (docs/sign-in.md#clients).
 */
import request from 'supertest';
import type { TestApp } from '../../helpers/app';
import type { Expected } from './domain-event-cases';

interface Context {
  t: () => TestApp;
  admin: string;
  adminSub: string;
}

export function clientEventCases({ t, admin, adminSub }: Context): Record<string, () => Promise<Expected>> {
  const actor = { subject: adminSub, platformAdmin: true };
  async function newClient(): Promise<string> {
    const res = await request(t().app).post('/api/setup/clients').set('Authorization', admin).send({ name: 'Events', type: 'public', redirect_uris: ['https://app.example.com/cb'] }).expect(201);
    return res.body.client_id as string;
  }
  return {
    async createOidcClient() {
      const res = await request(t().app).post('/api/setup/clients').set('Authorization', admin).send({ name: 'Events', type: 'confidential', redirect_uris: ['https://app.example.com/cb'] });
      return { res, status: 201, action: 'client.created', actor, target: { type: 'client', id: res.body.client_id }, tenantId: null };
    },
    async updateOidcClient() {
      const id = await newClient();
      const res = await request(t().app).patch(`/api/setup/clients/${id}`).set('Authorization', admin).send({ name: 'Renamed' });
      return { res, status: 200, action: 'client.updated', actor, target: { type: 'client', id }, tenantId: null };
    },
    async deleteOidcClient() {
      const id = await newClient();
      const res = await request(t().app).delete(`/api/setup/clients/${id}`).set('Authorization', admin);
      return { res, status: 204, action: 'client.deleted', actor, target: { type: 'client', id }, tenantId: null };
    },
  };
}
