/**
 * A product request through nginx with the decision (examples/nginx.conf: auth_request to
 * GET /api/tenant/decision, then the example product) against the same request sent to the
 * product directly, carrying the headers the decision would have set (the product does the same
 * work; only the gateway and the decision are missing), and against the same product behind the
 * same nginx configuration whose decision is answered by a hand-written auth endpoint that
 * verifies the token and answers from memory (bench/reference-server.ts `reference-memory`, in
 * its own process; target: at least 0.8x its req/s). Alternating rounds, median ratios, as in
 * pipeline-ratios.ts. Skipped when /usr/sbin/nginx is absent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repositoryRoot, waitForPort, writeNginxConfig } from './example-gateways';
import { startServerProcess, type ServerProcess } from './server-process';
import type { BenchContext, Throughput } from './types';

const NGINX = '/usr/sbin/nginx';
const ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_RATIO_DURATION ?? 5);
const WARMUP_S = Number(process.env.BENCH_RATIO_WARMUP ?? 3);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return Math.round((s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2) * 1000) / 1000;
};
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : 0);

async function sparePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The decision's headers for the bench member, asked once, to send to the product directly. */
function decisionHeaders(servicePort: number, member: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: servicePort, path: '/api/tenant/decision', headers: member }, (res) => {
        res.resume();
        if (res.statusCode !== 200) return reject(new Error(`the decision answered ${res.statusCode}`));
        const h = res.headers;
        resolve({
          'X-Tenant-Id': String(h['x-tenant-id']),
          'X-Tenant-Slug': String(h['x-tenant-slug']),
          'X-Tenant-Role': String(h['x-tenant-role']),
          'X-User-Id': String(h['x-user-id']),
          'X-User-Subject': String(h['x-user-subject']),
        });
      })
      .on('error', reject);
  });
}

export async function gatewayScenario(ctx: BenchContext) {
  if (!fs.existsSync(NGINX)) {
    ctx.log(`gateway: skipped, ${NGINX} not found (apt-get install -y nginx-light)`);
    return { skipped: `${NGINX} not found` };
  }
  const servicePort = Number(new URL(ctx.serviceUrl).port);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-bench-gateway-'));
  const memoryDir = path.join(dir, 'memory-reference');
  fs.mkdirSync(memoryDir);
  const children: ChildProcess[] = [];
  let memoryAuth: ServerProcess | null = null;
  try {
    const productPort = await sparePort();
    const product = spawn(process.execPath, [path.join(repositoryRoot(), 'examples', 'product', 'server.js')], {
      env: { ...process.env, PORT: String(productPort), HOST: '127.0.0.1', PRODUCT_AUTH: 'gateway' },
      stdio: 'ignore',
    });
    children.push(product);
    await waitForPort(productPort, 'the example product', product);
    const gatewayPort = await sparePort();
    const nginx = spawn(NGINX, writeNginxConfig(dir, { service: servicePort, product: productPort, gateway: gatewayPort }, { accessLog: false }), { stdio: 'ignore' });
    children.push(nginx);
    await waitForPort(gatewayPort, 'nginx', nginx);
    // The same nginx configuration, its auth upstream the hand-written memory decision.
    memoryAuth = await startServerProcess('reference-memory', ctx.serviceEnv);
    const memoryGatewayPort = await sparePort();
    const memoryNginx = spawn(NGINX, writeNginxConfig(memoryDir, { service: memoryAuth.port, product: productPort, gateway: memoryGatewayPort }, { accessLog: false }), { stdio: 'ignore' });
    children.push(memoryNginx);
    await waitForPort(memoryGatewayPort, 'nginx (memory reference)', memoryNginx);

    const direct = await decisionHeaders(servicePort, ctx.member);
    const viaNginx = `http://127.0.0.1:${gatewayPort}/whoami`;
    const viaMemoryNginx = `http://127.0.0.1:${memoryGatewayPort}/whoami`;
    const toProduct = `http://127.0.0.1:${productPort}/whoami`;
    await ctx.load('warm-up (not counted): product through nginx + decision', viaNginx, ctx.member, { duration: WARMUP_S });
    await ctx.load('warm-up (not counted): product through nginx + hand-written memory decision', viaMemoryNginx, ctx.member, { duration: WARMUP_S });
    await ctx.load('warm-up (not counted): product directly', toProduct, direct, { duration: WARMUP_S });
    const gateway: Throughput[] = [];
    const memory: Throughput[] = [];
    const plain: Throughput[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      gateway.push(await ctx.load(`GET /whoami through nginx with the decision (round ${round})`, viaNginx, ctx.member, { duration: ROUND_S }));
      memory.push(await ctx.load(`GET /whoami through nginx with the hand-written memory decision (round ${round})`, viaMemoryNginx, ctx.member, { duration: ROUND_S }));
      plain.push(await ctx.load(`GET /whoami on the product directly (round ${round})`, toProduct, direct, { duration: ROUND_S }));
    }
    const rps = gateway.map((g, i) => ratio(g.requests_per_s, plain[i]!.requests_per_s));
    const p99 = gateway.map((g, i) => ratio(g.p99_ms, plain[i]!.p99_ms));
    const vsMemoryRps = gateway.map((g, i) => ratio(g.requests_per_s, memory[i]!.requests_per_s));
    const vsMemoryP99 = gateway.map((g, i) => ratio(g.p99_ms, memory[i]!.p99_ms));
    const rows = (ts: Throughput[]) => ts.map(({ requests_per_s, p50_ms, p99_ms, non_2xx }) => ({ requests_per_s, p50_ms, p99_ms, non_2xx }));
    const out = {
      rps_ratio: median(rps),
      p99_ratio: median(p99),
      rounds: { rps, p99 },
      vs_memory_reference: {
        rps_ratio: median(vsMemoryRps),
        p99_ratio: median(vsMemoryP99),
        rounds: { rps: vsMemoryRps, p99: vsMemoryP99 },
        targets: { rps_ratio_at_least: 0.8 },
        met: median(vsMemoryRps) >= 0.8,
      },
      through_nginx: rows(gateway),
      through_nginx_memory_reference: rows(memory),
      direct: rows(plain),
    };
    ctx.log(`  product through nginx + decision: median ${out.rps_ratio}x the direct request's req/s (rounds ${rps.join(', ')}), p99 ${out.p99_ratio}x (no target)`);
    ctx.log(`  product through nginx + decision: median ${out.vs_memory_reference.rps_ratio}x the same behind nginx with the hand-written memory decision (rounds ${vsMemoryRps.join(', ')}), p99 ${out.vs_memory_reference.p99_ratio}x (target: req/s >= 0.8x)`);
    return out;
  } finally {
    for (const c of children.reverse()) await stop(c);
    await memoryAuth?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
