/**
 * SSO's outgoing requests (docs/sso.md#outgoing-requests): OIDC discovery, JWKS and the token
 * endpoint follow the webhook network rule — `https:` to public addresses only, checked on the
 * address each connection actually uses — unless SERVICE_SSO_ALLOW_PRIVATE_NETWORKS allows
 * `http:` and loopback / private addresses. Each request has 5 s and reads at most 1 MiB; no
 * redirect is followed. The answer is a Fetch `Response`, so openid-client takes it as its
 * `customFetch`.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { bareHost, forbiddenAddressKind, guardedLookup } from '../webhook-network';

export const SSO_TIMEOUT_MS = 5_000;
export const SSO_MAX_BYTES = 1024 * 1024;

/** Why an outgoing request was not made or not finished; `message` is safe to show a tenant admin. */
export class SsoNetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsoNetworkError';
  }
}

export interface NetworkPolicy {
  readonly allowPrivateNetworks: boolean;
}

/** Throws SsoNetworkError when `url` may not be asked under the policy (scheme, IP literal); the name's addresses are checked at connect. */
export function checkUrl(url: URL, policy: NetworkPolicy): void {
  const allowed = policy.allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) {
    throw new SsoNetworkError(`${url.origin} is not https; identity providers are reached over https only (SERVICE_SSO_ALLOW_PRIVATE_NETWORKS=true allows http, for local development)`);
  }
  const host = bareHost(url.hostname);
  if (!policy.allowPrivateNetworks) {
    const kind = net.isIP(host) ? forbiddenAddressKind(host) : host === 'localhost' || host.endsWith('.localhost') ? 'loopback' : null;
    if (kind) throw new SsoNetworkError(`${url.host} is on a ${kind} network; identity providers are reached at public addresses only (SERVICE_SSO_ALLOW_PRIVATE_NETWORKS=true allows private ones, for local development)`);
  }
}

type FetchInit = { method?: string; headers?: HeadersInit; body?: unknown; signal?: AbortSignal | null };

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new SsoNetworkError('unsupported request body');
}

function describe(err: unknown, url: URL): SsoNetworkError {
  if (err instanceof SsoNetworkError) return err;
  const e = err as NodeJS.ErrnoException & { kind?: string };
  if (e?.name === 'ForbiddenNetworkError') return new SsoNetworkError(`${url.host} resolves to a ${e.kind ?? 'private'} network; identity providers are reached at public addresses only`);
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return new SsoNetworkError(`${url.origin} did not answer within ${SSO_TIMEOUT_MS / 1000} s`);
  return new SsoNetworkError(`${url.origin} could not be reached (${e?.code ?? e?.message ?? 'error'})`);
}

/** A Fetch-compatible function under the policy. */
export function guardedFetch(policy: NetworkPolicy): (input: string | URL, init?: FetchInit) => Promise<Response> {
  return async (input, init = {}) => {
    const url = new URL(String(input));
    checkUrl(url, policy);
    const signals = [AbortSignal.timeout(SSO_TIMEOUT_MS), ...(init.signal ? [init.signal] : [])];
    const signal = AbortSignal.any(signals);
    const headers: Record<string, string> = { 'user-agent': 'tenant-service-sso' };
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = bodyOf(init.body);
    try {
      return await new Promise<Response>((resolve, reject) => {
        const req = (url.protocol === 'https:' ? https : http).request(
          url,
          { method: init.method ?? 'GET', headers, agent: false, lookup: policy.allowPrivateNetworks ? undefined : guardedLookup, signal },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              size += c.length;
              if (size > SSO_MAX_BYTES) {
                res.destroy(new SsoNetworkError(`${url.origin} answered more than ${SSO_MAX_BYTES} bytes`));
                return;
              }
              chunks.push(c);
            });
            res.on('error', reject);
            res.on('end', () => {
              const status = res.statusCode ?? 502;
              const h = new Headers();
              for (const [k, v] of Object.entries(res.headers)) {
                if (Array.isArray(v)) v.forEach((x) => h.append(k, x));
                else if (v !== undefined) h.set(k, v);
              }
              const buf = Buffer.concat(chunks);
              const nullBody = [101, 204, 205, 304].includes(status) || status < 200;
              resolve(new Response(nullBody ? null : buf, { status: status < 200 || status > 599 ? 502 : status, headers: h }));
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    } catch (err) {
      throw describe(signal.aborted && !(err instanceof SsoNetworkError) ? signal.reason : err, url);
    }
  };
}
