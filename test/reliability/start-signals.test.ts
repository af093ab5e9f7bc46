/**
 * `npm start` as an operator runs it (docs/operations.md#starting-the-service): SIGTERM sent to
 * `npm start`'s own process id reaches the server, which drains, logs its shutdown and exits,
 * leaving no process behind; and with unchanged sources `npm start` does not rebuild.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { TEST_DATA_DIR, testDatabaseUrl } from '../helpers/app';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, waitUntilReady, type ServerProcess } from '../helpers/server-process';

jest.setTimeout(240_000);

const running: ServerProcess[] = [];

/** The process ids whose parent is `pid` (from /proc; Linux only, like the rest of the suite). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may contain spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

beforeAll(async () => {
  // Writes dist/ and the build stamp, so `npm start` below finds nothing to rebuild.
  await buildOnce();
}, 240_000);

afterAll(() => {
  for (const s of running) {
    for (const pid of [s.proc.pid!, ...childrenOf(s.proc.pid!)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
});

it('SIGTERM to `npm start`’s pid stops the server gracefully and leaves nothing running; no rebuild', async () => {
  const port = await freePort();
  const npmCli = process.env.npm_execpath && fs.existsSync(process.env.npm_execpath) ? process.env.npm_execpath : execFileSync('which', ['npm']).toString().trim();
  const server = startServerProcess(
    port,
    { SERVICE_DATABASE_URL: testDatabaseUrl(), SERVICE_DATA_DIR: TEST_DATA_DIR, SERVICE_RATE_LIMIT_ENABLED: 'false', SERVICE_LOG_LEVEL: 'info' },
    { file: npmCli.endsWith('.js') ? process.execPath : npmCli, args: [...(npmCli.endsWith('.js') ? [npmCli] : []), 'start', '--silent'] },
  );
  running.push(server);
  const status = await waitUntilReady(server, 180_000);
  expect({ status, stderr: server.stderr() }).toEqual({ status: 200, stderr: expect.any(String) });
  // Sources unchanged since buildOnce(): prestart found dist/ up to date.
  expect(server.stderr()).not.toContain('building');

  const npmPid = server.proc.pid!;
  const nodeServers = childrenOf(npmPid).filter((pid) => commandLine(pid).includes('dist/src/server.js'));
  expect(nodeServers).toHaveLength(1); // `exec` in the start script: no shell in between
  const serverPid = nodeServers[0]!;

  process.kill(npmPid, 'SIGTERM');
  const exit = await server.exited;
  // The server may take a moment longer than npm to finish; it must finish on its own.
  for (let waited = 0; alive(serverPid) && waited < 60_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
  expect(alive(serverPid)).toBe(false);
  expect(childrenOf(npmPid)).toEqual([]);
  const messages = server.logs.map((l) => l.msg);
  expect(server.logs).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'Shutting down: finishing in-flight requests', signal: 'SIGTERM' })]));
  expect(messages).toContain('Stopped');
  expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
  // No line of the server's output is anything but JSON (npm --silent prints no banner).
  expect(server.logs.every((l) => typeof l.level === 'number')).toBe(true);
  await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
});
