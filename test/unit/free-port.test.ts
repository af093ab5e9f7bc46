/**
 * test/helpers/pg-cluster.ts's freePort hands a child process a port outside the kernel's
 * ephemeral range, so no outgoing connection (of any process on the machine) can take it between
 * the pick and the child's listen.
 */
import fs from 'node:fs';
import net from 'node:net';
import { freePort } from '../helpers/pg-cluster';

const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

it('picks ports below the ephemeral range that can be listened on, not the same one every time', async () => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) expect(port).toBeLessThan(low);
  expect(new Set(ports).size).toBeGreaterThan(1);
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(ports[0], '127.0.0.1', resolve));
  await new Promise<void>((resolve) => srv.close(() => resolve()));
});

