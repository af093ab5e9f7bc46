/**
 * The cost of matching a request to its operation with openapi-backend's router (as the match
 * stage calls it, operation list cached): microseconds per match for an exact path and for
 * templated paths. `npm run build && node dist/bench/route-match.js`.
 */
import { createContractApi } from '../src/http/openapi';

const CASES: Array<[method: string, path: string]> = [
  ['GET', '/api/tenant'],
  ['GET', '/api/boards'],
  ['GET', '/api/boards/0b1a2c3d-0000-4000-8000-000000000000'],
  ['DELETE', '/api/tenant/invitations/0b1a2c3d-0000-4000-8000-000000000000'],
];
const WARMUP = 20_000;
const RUNS = 100_000;

async function main(): Promise<void> {
  const { router } = await createContractApi();
  for (const [method, path] of CASES) {
    const match = () => router.matchOperation({ method, path, headers: {} }, true);
    for (let i = 0; i < WARMUP; i++) match();
    const started = process.hrtime.bigint();
    for (let i = 0; i < RUNS; i++) match();
    const us = Number(process.hrtime.bigint() - started) / RUNS / 1000;
    process.stdout.write(`${method} ${path}: ${us.toFixed(2)} µs per match\n`);
  }
}

void main();
