/**
 * `tenantctl tenant import` streams its file (docs/operations.md#moving-a-tenant-between-deployments):
 * the built binary sends a 384 MiB file to a server that reads all of it, and its memory at its
 * peak stays far below the file's size (it used to hold the whole file: Node's fetch keeps every
 * chunk of a streamed body until the request ends). Memory is read from /proc (Linux) while the
 * server, having received every byte, holds its answer.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CLI, ROOT } from '../helpers/cli';
import { buildOnce } from '../helpers/server-process';

jest.setTimeout(180_000);

const FILE_BYTES = 384 * 1024 * 1024;
const MIB = 1024 * 1024;

let dir: string;
let server: http.Server;
let port: number;
/** The one upload: its bytes received so far, and the answer held until the test releases it. */
const upload = { bytes: 0, ended: false, contentType: '', answer: null as null | (() => void) };

beforeAll(async () => {
  await buildOnce();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-import-stream-'));
  server = http.createServer((req, res) => {
    upload.contentType = req.headers['content-type'] ?? '';
    req.on('data', (c: Buffer) => (upload.bytes += c.length));
    req.on('end', () => {
      upload.ended = true;
      upload.answer = () => {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ tenant_id: '0b1a2c3d-0000-4000-8000-000000000000', slug: 'streamed', counts: { tenants: 1 } }));
      };
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('sends the whole file with its memory flat, then prints the answer', async () => {
  const file = path.join(dir, 'big.ndjson');
  // Sparse: 384 MiB to read, no disk to write.
  fs.closeSync(fs.openSync(file, 'w'));
  fs.truncateSync(file, FILE_BYTES);
  const proc = spawn(process.execPath, [CLI, 'tenant', 'import', file, '--format', 'json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), SERVICE_DATA_DIR: dir, SERVICE_URL: `http://127.0.0.1:${port}`, SERVICE_TOKEN: 'x.y.z' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => proc.once('close', r));
  try {
    // Wait (bounded) for the server to have the whole file; the binary then waits for the answer.
    for (let i = 0; i < 1200 && !upload.ended; i++) await sleep(50);
    expect({ bytes: upload.bytes, ended: upload.ended }).toEqual({ bytes: FILE_BYTES, ended: true });
    expect(upload.contentType).toBe('application/x-ndjson');
    const peak = Number(/^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024;
    expect(peak).toBeLessThan(192 * MIB);
    upload.answer!();
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ slug: 'streamed' });
  } finally {
    proc.kill('SIGKILL');
  }
});
