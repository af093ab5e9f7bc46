/**
 * A real SMTP server (the `smtp-server` package) on a spare port, keeping every message it
 * receives, so tests read the mail the service actually sent.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Header value by lowercase name (first occurrence, unfolded). */
  header(name: string): string | undefined;
  /** The decoded body of the first part with this content type (quoted-printable or base64). */
  part(contentType: 'text/plain' | 'text/html'): string | undefined;
}

export interface SmtpSink {
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the next message addressed to `to` (waiting for it if needed). */
  waitFor(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decode(body: string, encoding: string | undefined): string {
  const enc = (encoding ?? '').toLowerCase();
  if (enc === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const splitHead = (text: string): [Map<string, string>, string] => {
    const i = text.search(/\r?\n\r?\n/);
    const head = i < 0 ? text : text.slice(0, i);
    const body = i < 0 ? '' : text.slice(i).replace(/^\r?\n\r?\n/, '');
    const headers = new Map<string, string>();
    for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
      const c = line.indexOf(':');
      if (c > 0) {
        const k = line.slice(0, c).trim().toLowerCase();
        if (!headers.has(k)) headers.set(k, line.slice(c + 1).trim());
      }
    }
    return [headers, body];
  };
  const [headers, body] = splitHead(raw);
  const parts: Array<{ type: string; text: string }> = [];
  const collect = (h: Map<string, string>, b: string) => {
    const ct = h.get('content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(ct)?.[1];
    if (ct.toLowerCase().startsWith('multipart/') && boundary) {
      for (const chunk of b.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith('--')) break;
        const [ph, pb] = splitHead(chunk.replace(/^\r?\n/, ''));
        collect(ph, pb);
      }
    } else {
      parts.push({ type: ct.split(';')[0]!.trim().toLowerCase(), text: decode(b, h.get('content-transfer-encoding')) });
    }
  };
  collect(headers, body);
  return {
    from,
    to,
    raw,
    header: (name) => headers.get(name.toLowerCase()),
    part: (type) => parts.find((p) => p.type === type)?.text,
  };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<{ to: string; resolve: (m: ReceivedMail) => void }> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const mail = parse(Buffer.concat(chunks).toString('utf8'), from, to);
        messages.push(mail);
        for (const w of [...waiters]) {
          if (to.includes(w.to.toLowerCase())) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(to, timeoutMs = 30_000) {
      const found = messages.find((m) => m.to.includes(to.toLowerCase()));
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          to,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
