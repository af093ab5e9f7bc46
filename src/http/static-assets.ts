/**
 * Static pages and assets the service serves beside its API (/docs, /console): in-memory files
 * with a strong ETag and gzip, and the one Content-Security-Policy those pages share.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

const gzip = promisify(zlib.gzip);

/** A static asset held in memory, with its gzip variant and a strong ETag. */
export interface Asset {
  body: Buffer;
  gzipped: Buffer | null;
  etag: string;
  contentType: string;
}


export function asset(body: Buffer | string, contentType: string): Asset {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const etag = `"${crypto.createHash('sha256').update(buf).digest('base64url').slice(0, 27)}"`;
  return { body: buf, gzipped: null, etag, contentType };
}

/**
 * Sends an in-memory asset: 304 on a matching If-None-Match, gzip when the client accepts it
 * (the Scalar bundle is 4 MB raw, about 1 MB gzipped).
 */
export async function sendAsset(req: Request, res: Response, a: Asset, cacheControl: string): Promise<void> {
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', a.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === a.etag)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', a.contentType);
  let body = a.body;
  if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    a.gzipped ??= await gzip(a.body, { level: 6 });
    body = a.gzipped;
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.setHeader('Content-Length', String(body.length));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}


/**
 * CSP for the pages the service serves (/docs, /console): helmet's defaults (script-src 'self',
 * connect-src 'self' via default-src, object-src 'none', frame-ancestors 'self', ...): the page
 * needs no inline script, no eval and no remote origin. Two differences, and one option:
 * - font-src and style-src lose helmet's `https:`, so the browser itself refuses any remote font
 *   or stylesheet (the page must work offline; this is a tightening, not a loosening);
 * - over plain HTTP, `upgrade-insecure-requests` is left out, because it would rewrite the page's
 *   own http:// asset and API requests to https://, which an instance listening on plain HTTP
 *   (the default) cannot answer. Over HTTPS it stays;
 * - `connectSrc` adds origins the page may call besides its own: the console's OpenID provider,
 *   whose discovery and token endpoints the browser calls during the PKCE sign-in.
 */
export function pageCsp(connectSrc: readonly string[] = []): RequestHandler {
  const directives: Record<string, string[]> = {
    fontSrc: ["'self'", 'data:'],
    styleSrc: ["'self'", "'unsafe-inline'"],
    ...(connectSrc.length ? { connectSrc: ["'self'", ...connectSrc] } : {}),
  };
  const secure = helmet.contentSecurityPolicy({ useDefaults: true, directives });
  const plain = helmet.contentSecurityPolicy({ useDefaults: true, directives: { ...directives, upgradeInsecureRequests: null } });
  return (req, res, next) => (req.secure ? secure : plain)(req, res, next);
}

