/**
 * The HTTP server of `npm start`: Node makes each request and response object with express's
 * prototypes from the start, instead of express switching them on every request.
 *
 * Express's `app.handle` sets the prototype of `req` and `res` to `app.request` and
 * `app.response` (`Object.setPrototypeOf`). V8 gives every object whose prototype was switched a
 * hidden class of its own, so the code that reads them (Node's HTTP internals, express, every
 * stage) runs slower, and about a third of what a request allocates outlives the young generation
 * (measured with `node --trace-gc-nvp`: 30–40 % of the bytes allocated promoted, against none
 * without the switch), which makes every young-generation collection long. Made with the right
 * prototypes, the switch is a no-op (the same prototype) and none of that happens: 3.9x the
 * requests per second of the same express app in a loop of `GET /healthz` on one machine
 * (docs/architecture.md "The HTTP server").
 *
 * Only Node's documented `IncomingMessage`/`ServerResponse` server options and express's public
 * `express.request`/`express.response` and `app.request`/`app.response` prototypes are used; a
 * request still goes through express exactly as before.
 *
 * What Node's HTTP parser refuses before express sees a request (a URL or header block past its
 * bound, a request that is not HTTP, one past the request timeout) is answered here with the
 * documented error body, never Node's empty one (docs/operations.md "Limits of a request"):
 * ./oversized-request.ts.
 */
import http from 'node:http';
import express, { type Express } from 'express';
import { answerClientError, PARSER_MAX_HEADER_BYTES, refuseOversized, type ErrorFormatOf } from './oversized-request';

export interface AppServer {
  readonly server: http.Server;
  /** Serves `app`: its `app.request`/`app.response` become the prototypes Node already gives. */
  serve(app: Express): void;
}

export interface AppServerOptions extends http.ServerOptions {
  /** The error body a path's refusals are written in (SCIM's under its base path); the service's by default. */
  readonly errorFormatOf?: ErrorFormatOf;
}

export function createAppServer(appOptions: AppServerOptions): AppServer {
  const { errorFormatOf = () => 'service', ...options } = appOptions;
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse {}
  // What express's own `app.request` is: an object inheriting from express.request, with `app`.
  Object.setPrototypeOf(AppRequest.prototype, express.request);
  Object.setPrototypeOf(AppResponse.prototype, express.response);
  const server = http.createServer({ maxHeaderSize: PARSER_MAX_HEADER_BYTES, ...options, IncomingMessage: AppRequest, ServerResponse: AppResponse });
  server.on('clientError', (err: Error, socket) => answerClientError(err, socket, errorFormatOf));
  let served = false;
  return {
    server,
    serve(app: Express): void {
      if (served) throw new Error('createAppServer: one app per server');
      served = true;
      for (const proto of [AppRequest.prototype, AppResponse.prototype]) {
        Object.defineProperty(proto, 'app', { configurable: true, enumerable: true, writable: true, value: app });
      }
      app.request = AppRequest.prototype as unknown as Express['request'];
      app.response = AppResponse.prototype as unknown as Express['response'];
      server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (!refuseOversized(req, res, errorFormatOf)) app(req, res);
      });
    },
  };
}
