/**
 * How the sign-in pages answer (docs/sign-in.md#the-sign-in-page): HTML with a policy that
 * allows only their own inline style sheet (by its hash) and forms posting to the service (or,
 * through its redirects, to a client or an identity provider); never cached; a form's body is
 * at most 8 KiB of URL-encoded fields, read only from the same origin.
 */
import crypto from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { errorPage, STYLE } from './html';
import { readBodyOutsideSignInSlot } from '../../http/sign-in-work';

const STYLE_HASH = crypto.createHash('sha256').update(STYLE, 'utf8').digest('base64');
export const PAGES_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self' https: http:; frame-ancestors 'none'; base-uri 'none'`;

export function sendPage(res: Response, status: number, html: string): void {
  if (res.headersSent) return;
  // Same-origin referrers: the browser then sends the Origin of the pages' own forms.
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': PAGES_CSP, 'Referrer-Policy': 'same-origin' }).send(html);
}

/** The request id (set by the request-state stage), shown as a reference on error pages. */
export function requestReference(res: Response): string | null {
  const id = res.getHeader('X-Request-Id');
  return typeof id === 'string' ? id : null;
}

export function sendError(res: Response, status: number, title: string, message: string, reference: string | null = requestReference(res)): void {
  sendPage(res, status, errorPage({ title, message, reference }));
}

const parseForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });

/**
 * Reads a form post: refused (403 page) unless it comes from this origin (Sec-Fetch-Site, else
 * Origin, when the browser sends them; the interaction's cookie binds the rest to the browser).
 * A body too large, or not a form, is a 413 / 400 page, never a 500.
 */
export function formBody(origin: string): RequestHandler {
  return (req, res, next) => {
    // The browser's own word first (pages cannot set Sec-Fetch-Site); Origin when it sends none.
    const site = req.get('sec-fetch-site');
    const from = req.get('origin');
    const foreign = site !== undefined ? site !== 'same-origin' && site !== 'none' : from !== undefined && from !== origin;
    if (foreign) {
      return sendError(res, 403, 'Sign-in refused', 'This form can only be sent from the sign-in page itself. Go back to the application and start again.');
    }
    void readBodyOutsideSignInSlot(req, res, parseForm).then((err) => {
      if (!err) return next();
      const e = err as { status?: number; type?: string };
      if (e.type === 'entity.too.large' || e.status === 413) return sendError(res, 413, 'Sign-in refused', 'The form sent was far too large.');
      return sendError(res, 400, 'Sign-in refused', 'The form sent could not be read.');
    });
  };
}

/** A form field as one string (null when absent, repeated or not a string). */
export function field(req: Request, name: string): string | null {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' ? v : null;
}
