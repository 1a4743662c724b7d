import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * An SMTP server on loopback that takes `delayMs` to accept each mail, so that a sending is in flight long enough
 * for a second command or a signal to meet it; `received` lists each mail's recipients in arrival order.
 */
export async function slowSmtpServer(
  delayMs: number,
): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, cb) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((r) => r.address).join(','));
        setTimeout(() => cb(), delayMs);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
