/**
 * A file uploaded as fast as the connection takes it, never held in memory (docs/tenantctl.md):
 * the generated client builds the request (URL, headers, its answer's parsing) and this `fetch`
 * sends it with node:http(s), piping the file into the request with backpressure. Node's own
 * `fetch` (undici) keeps every chunk of a streamed request body until the request ends — a
 * 1.1 GB import held 1.16 GB — so the body never goes through it.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for one request of the generated client whose body is `source` (the body the client
 * built is ignored): `sent` is told each chunk's size as it goes out.
 */
export function streamingFetch(source: NodeJS.ReadableStream, sent: (bytes: number) => void): (request: Request) => Promise<Response> {
  return (request) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        if (name !== 'content-length') headers[name] = value;
      });
      const req = (url.protocol === 'https:' ? https : http).request(url, { method: request.method, headers, signal: request.signal });
      req.once('response', (res) => {
        const status = res.statusCode ?? 502;
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) for (const v of Array.isArray(value) ? value : [value]) answer.append(name, v);
        }
        const body = NULL_BODY_STATUSES.has(status) ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        if (!body) res.resume();
        resolve(new Response(body, { status, statusText: res.statusMessage, headers: answer }));
      });
      // A refusal may come before the whole file is sent: then the answer stands, not the write's error.
      req.once('error', reject);
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sent(chunk.length);
          done(null, chunk);
        },
      });
      pipeline(source as Readable, counter, req).catch(reject);
    });
}
