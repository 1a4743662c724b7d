import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-answers';
import type { PosCredentials } from './model';
import type { SandboxWorld } from './sandbox-world';

/** The PSP's authentication (section 5): `X-API-AUTH: PAY key:secret` (or the signed form), and `X-API-KEY`. */
export function authenticate(
  world: SandboxWorld,
  req: IncomingMessage,
  body: string,
  requireEndpointsKey: boolean,
): PosCredentials {
  const header = req.headers['x-api-auth'];
  const m = typeof header === 'string' ? /^(PAY|PAY-HMAC-SHA1) ([^:\s]+):(\S+)$/.exec(header.trim()) : null;
  const deny = (why: string): never => {
    world.stats.unauthorized++;
    throw HttpError(401, 'unauthorized', `Authentication failed: ${why}`);
  };
  if (!m) return deny('X-API-AUTH missing or malformed');
  const creds = world.scenario.credentials.find((c) => c.apiKey === m[2]);
  if (!creds) return deny('unknown API key');
  if (m[1] === 'PAY') {
    if (m[3] !== creds.apiSecret) return deny('wrong API secret');
  } else if (
    !world.verifySignedAuth?.({
      method: req.method ?? '',
      url: req.url ?? '',
      body,
      apiKey: m[2]!,
      signature: m[3]!,
      credentials: creds,
    })
  ) {
    return deny('signed form not accepted by this sandbox');
  }
  const key = req.headers['x-api-key'];
  if (requireEndpointsKey && key !== creds.endpointsKey) return deny('X-API-KEY missing or wrong');
  return creds;
}

export function requirePos(creds: PosCredentials, posId: string): void {
  if (creds.posId !== posId) throw HttpError(403, 'forbidden', 'These credentials do not belong to this pos_id');
}
