/**
 * A real DNS server for tests (the `dns2` package on a spare UDP port of 127.0.0.1): each name
 * answers what the test set — TXT values, NODATA, NXDOMAIN, SERVFAIL, or nothing at all (the
 * client times out). Unknown names are NXDOMAIN. Point the service at it with
 * SERVICE_DNS_SERVERS=`address`.
 */
// dns2 ships no types: the little of it used here is typed below.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dns2 = require('dns2') as Dns2;

interface Dns2Packet {
  header: { rcode: number };
  questions: Array<{ name: string; type: number }>;
  answers: unknown[];
}
interface Dns2 {
  Packet: { TYPE: { TXT: number }; CLASS: { IN: number }; createResponseFromRequest(req: Dns2Packet): Dns2Packet };
  createServer(opts: { udp: boolean; handle: (req: Dns2Packet, send: (res: Dns2Packet) => void) => void }): {
    listen(opts: { udp: { port: number; address: string } }): Promise<unknown>;
    addresses(): { udp?: { port: number } };
    close(): Promise<unknown>;
  };
}

export type DnsAnswer = { txt: string[] } | 'nodata' | 'nxdomain' | 'servfail' | 'timeout';

export interface DnsServer {
  /** `127.0.0.1:<port>`, as SERVICE_DNS_SERVERS takes it. */
  readonly address: string;
  /** What `name` answers from now on. */
  set(name: string, answer: DnsAnswer): void;
  /** Questions asked so far (lower-cased names). */
  readonly asked: string[];
  close(): Promise<void>;
}

const RCODE = { nxdomain: 3, servfail: 2 } as const;

export async function startDnsServer(): Promise<DnsServer> {
  const answers = new Map<string, DnsAnswer>();
  const asked: string[] = [];
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const q = request.questions[0];
      const name = (q?.name ?? '').toLowerCase();
      asked.push(name);
      const answer = answers.get(name) ?? 'nxdomain';
      if (answer === 'timeout') return;
      const response = Packet.createResponseFromRequest(request);
      if (answer === 'nxdomain' || answer === 'servfail') response.header.rcode = RCODE[answer];
      else if (answer !== 'nodata' && q?.type === Packet.TYPE.TXT) {
        for (const data of answer.txt) response.answers.push({ name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data });
      }
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = server.addresses().udp!.port;
  return {
    address: `127.0.0.1:${port}`,
    set: (name, answer) => answers.set(name.toLowerCase(), answer),
    asked,
    close: async () => {
      await server.close();
    },
  };
}
