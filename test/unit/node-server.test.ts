/**
 * src/http/node-server.ts: Node makes requests and responses with the app's own prototypes, so
 * express's per-request prototype switch changes nothing, and express works on them as usual.
 */
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { createAppServer } from '../../src/http/node-server';

it('gives each request and response the prototypes express would switch them to, before express sees them', async () => {
  const app = express();
  app.set('trust proxy', 1);
  app.get('/x', (req, res) => {
    res.setHeader('X-Same', String(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response));
    res.status(201).json({ ip: req.ip, app: req.app === app && res.app === app, path: req.path, query: req.query });
  });
  const { server, serve } = createAppServer({});
  const before: boolean[] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Runs before express's handler (registered below): the prototypes are already the app's.
    before.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
  });
  serve(app);
  expect(() => serve(express())).toThrow(/one app per server/);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/x?a=1`, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-same')).toBe('true');
    expect(await res.json()).toEqual({ ip: '203.0.113.7', app: true, path: '/x', query: { a: '1' } });
    expect(before).toEqual([true]);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
