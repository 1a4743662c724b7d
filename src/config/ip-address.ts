import { isIP, SocketAddress } from 'node:net';

/**
 * One spelling per IP address, so that the webhook allow-list (WEBHOOK_ALLOWED_IPS) and the sender can be
 * compared as text: IPv6 in lower case and compressed (`0:0:0:0:0:0:0:1` → `::1`, `2001:DB8::10` →
 * `2001:db8::10`), and an IPv4-mapped IPv6 address as the IPv4 address it carries (`::ffff:203.0.113.10`,
 * `::ffff:cb00:710a` → `203.0.113.10`), which is how a dual-stack socket shows an IPv4 client.
 * undefined when the text is not an IP address, or names a zone (`fe80::1%eth0`: an interface, not a sender).
 */
export function canonicalIp(text: string): string | undefined {
  const t = text.trim();
  const family = isIP(t);
  if (family === 0 || t.includes('%')) return undefined;
  // Node's own formatter (RFC 5952 for IPv6); it keeps the ::ffff: prefix, so that is taken off here.
  const address = new SocketAddress({ address: t, family: family === 6 ? 'ipv6' : 'ipv4' }).address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  return mapped ? mapped[1]! : address;
}
