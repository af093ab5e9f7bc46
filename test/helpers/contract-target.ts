/**
 * Where the contract suite runs (docs/architecture.md#contract-tests-against-a-running-server):
 * an in-process app on the test database (`npm test`), or any running server when CONTRACT_URL
 * is set (`npm run test:contract`). Against a running server the suite acts only through the API:
 * CONTRACT_ADMIN_TOKEN is a platform admin's token; people's tokens come from
 * CONTRACT_TOKEN_COMMAND (a command that prints a token when given `--sub <s> --email <e>`), else
 * from the local provider's key in SERVICE_DATA_DIR (default ./.data), as `tenantctl token` mints
 * them.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { readLocalKeys, signLocalToken } from '../../src/auth/local-keys';
import { startTestApp, type TestApp } from './app';
import { adminToken, closeOwnerConnection, tokenFor } from './factories';
import { startDnsServer, type DnsServer } from './dns-server';

export interface ContractTarget {
  baseUrl: string;
  /** True against a server this suite did not start: nothing but the API is touched. */
  remote: boolean;
  adminToken(): string;
  /** A token of a person (with a verified email when given); `issuer` is the token's `iss`. */
  personToken(sub: string, email?: string): { token: string; issuer: string };
  /** The DNS server the service asks (SERVICE_DNS_SERVERS) when the suite started the server; null on a remote one. */
  dns: DnsServer | null;
  close(): Promise<void>;
}

export async function contractTarget(): Promise<ContractTarget> {
  const url = process.env.CONTRACT_URL;
  if (url) return remoteTarget(url.replace(/\/+$/, ''));
  const dns = await startDnsServer();
  const t: TestApp = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DNS_SERVERS: dns.address });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const admin = adminToken();
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    remote: false,
    dns,
    adminToken: () => admin,
    personToken: (sub, email) => {
      const token = tokenFor({ sub, email });
      return { token, issuer: String(decodeJwt(token).iss) };
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
      await dns.close();
      await closeOwnerConnection();
    },
  };
}

function remoteTarget(baseUrl: string): ContractTarget {
  const admin = process.env.CONTRACT_ADMIN_TOKEN;
  if (!admin) throw new Error('CONTRACT_URL is set without CONTRACT_ADMIN_TOKEN (a platform admin token, e.g. `npx tenantctl token --admin --sub contract-admin`)');
  const command = process.env.CONTRACT_TOKEN_COMMAND;
  const dataDir = path.resolve(process.env.SERVICE_DATA_DIR ?? './.data');
  const keys = command ? null : readLocalKeys(dataDir);
  if (!command && !keys) {
    throw new Error(`CONTRACT_URL is set, but people's tokens cannot be minted: set CONTRACT_TOKEN_COMMAND, or run from the directory whose ${dataDir} holds the local provider's key`);
  }
  return {
    baseUrl,
    remote: true,
    dns: null,
    adminToken: () => admin,
    personToken: (sub, email) => {
      const token = command
        ? execFileSync('/bin/sh', ['-c', `${command} --sub "$1"${email ? ' --email "$2"' : ''}`, 'sh', sub, email ?? ''], { encoding: 'utf8' }).trim()
        : signLocalToken(keys!, { sub, email });
      return { token, issuer: String(decodeJwt(token).iss) };
    },
    close: async () => undefined,
  };
}
