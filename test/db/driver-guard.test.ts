import { describe, expect, it } from 'vitest';
import { isDriverLostConnection } from '../../src/db/driver-guard';

/**
 * What the driver guard lets pass as "a driver query that lost its connection and that nobody awaited": the
 * connection codes, recognised by the driver's own frames in the stack or by the query text the driver gives
 * the error it fails a query with — a refused connect made by node:net under an `unsafe` query had neither
 * frames nor origin, and ended `recon serve` once in the outage test.
 */

function netError(code: string): Error {
  const e = new Error(`connect ${code} 127.0.0.1:5432`) as Error & { code: string };
  e.code = code;
  e.stack = `Error: connect ${code} 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)`;
  return e;
}

describe('driver guard', () => {
  it('recognises a lost connection the driver failed a query with, by its query text', () => {
    const e = netError('ECONNREFUSED');
    Object.defineProperty(e, 'query', { value: 'select 1', enumerable: false });
    expect(isDriverLostConnection(e)).toBe(true);
  });

  it('recognises one by the driver frames in its stack', () => {
    const e = netError('ECONNRESET');
    e.stack += '\n    at Socket.error (/app/node_modules/postgres/src/connection.js:381:5)';
    expect(isDriverLostConnection(e)).toBe(true);
  });

  it('recognises a refused connect raised by node:net with no caller frame (the outage test’s one exit)', () => {
    expect(isDriverLostConnection(netError('ECONNREFUSED'))).toBe(true);
  });

  it('lets anything else end the process as Node would', () => {
    const ours = netError('ECONNREFUSED');
    ours.stack += '\n    at send (/app/src/psp/transport.ts:10:3)';
    expect(isDriverLostConnection(ours)).toBe(false);
    const other = netError('EACCES');
    Object.defineProperty(other, 'query', { value: 'select 1' });
    expect(isDriverLostConnection(other)).toBe(false);
    expect(isDriverLostConnection(new TypeError('x'))).toBe(false);
    expect(isDriverLostConnection('ECONNREFUSED')).toBe(false);
  });
});
