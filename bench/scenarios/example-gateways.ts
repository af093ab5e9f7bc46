/**
 * The shipped gateway configurations (examples/nginx.conf, examples/Caddyfile) with only their
 * ports changed, run in the foreground with a directory of ours as nginx's prefix (the example
 * keeps its pid, logs and temp files under the prefix). Shared by test/operations/gateway.test.ts and the bench.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface GatewayPorts {
  service: number;
  product: number;
  gateway: number;
}

/** The addresses the shipped files use (a user's defaults): replaced by the given ports. */
const SHIPPED = { service: '127.0.0.1:8080', product: '127.0.0.1:3000', gateway: '127.0.0.1:8000' };

/** The repository root (the directory holding examples/), from src or from dist/. */
export function repositoryRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'examples', 'nginx.conf'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`examples/ not found above ${from}`);
  }
}

export function withPorts(text: string, ports: GatewayPorts): string {
  let out = text;
  for (const key of ['service', 'product', 'gateway'] as const) out = out.split(SHIPPED[key]).join(`127.0.0.1:${ports[key]}`);
  return out;
}

/**
 * Writes examples/nginx.conf for `ports` into `dir`; returns nginx's arguments to run it there
 * (`dir` is the prefix, so its pid, logs and temp files land in `dir`). `accessLog: false` turns
 * the access log off (the bench measures the decision, not the disk).
 */
export function writeNginxConfig(dir: string, ports: GatewayPorts, opts: { accessLog?: boolean } = {}): string[] {
  let conf = withPorts(fs.readFileSync(path.join(repositoryRoot(), 'examples', 'nginx.conf'), 'utf8'), ports).replace(/^worker_processes 1;$/m, 'worker_processes 1;\ndaemon off;');
  if (opts.accessLog === false) conf = conf.replace(/^(\s*)access_log [^;]+;$/m, '$1access_log off;');
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(file, conf);
  return ['-p', dir, '-c', file, '-e', path.join(dir, 'startup-error.log')];
}

/** Writes examples/Caddyfile for `ports` into `dir`; returns its path. */
export function writeCaddyfile(dir: string, ports: GatewayPorts): string {
  const file = path.join(dir, 'Caddyfile');
  fs.writeFileSync(file, withPorts(fs.readFileSync(path.join(repositoryRoot(), 'examples', 'Caddyfile'), 'utf8'), ports));
  return file;
}

/** Waits until `child` listens on `port` (up to 30 s); `log` adds its output to a failure. */
export async function waitForPort(port: number, what: string, child: ChildProcess, log: () => string = () => ''): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on ${port}:\n${log()}`);
}
