/**
 * The compiled `tenantctl` run as a user runs it, against a test app listening on a spare port:
 * the harness the CLI suites share.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestApp, TEST_DATA_DIR, type TestApp } from './app';
import { buildOnce } from './server-process';

export const ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A child process's exit code and whole output. */
export function runProcess(command: string, args: string[], opts: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface CliServer {
  t: TestApp;
  baseUrl: string;
  /** Runs the binary with PATH, HOME, SERVICE_URL and SERVICE_DATA_DIR set, plus `env` (undefined removes one). */
  tenantctl(args: string[], env?: Record<string, string | undefined>): Promise<Run>;
  close(): Promise<void>;
}

/** Builds once, starts a test app with `env` and listens on a spare port. */
export async function startCliServer(env: Record<string, string> = { SERVICE_MULTI_TENANT_MODE: 'true' }): Promise<CliServer> {
  await buildOnce();
  const t = await startTestApp(env);
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    t,
    baseUrl,
    tenantctl(args, extra = {}) {
      const merged: Record<string, string | undefined> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: baseUrl, SERVICE_DATA_DIR: TEST_DATA_DIR, ...extra };
      for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
      return runProcess(process.execPath, [CLI, ...args], { cwd: ROOT, env: merged as Record<string, string> });
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}
