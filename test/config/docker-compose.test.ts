import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * README: "docker compose up recon   # the worker (recon start) on port 8080". docker-compose.yml publishes
 * 8080:8080 and runs `npx recon start`, whose --host defaults to 127.0.0.1: inside the container the worker
 * listens on the container's loopback only, which Docker's port publishing (and the PSP's webhooks) cannot
 * reach. The worker must listen on the container's interfaces (--host 0.0.0.0).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('docker-compose.yml: the recon worker', () => {
  it('listens on an address reachable through the published port 8080', () => {
    const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    const service = compose.slice(compose.indexOf('\n  recon:'));
    expect(service).toMatch(/ports: \["8080:8080"\]/);
    const command = /command: (\[.*\])/.exec(service)?.[1] ?? '';
    expect(command).toMatch(/recon start/);

    // What `recon start` listens on when --host is not given.
    const help = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'start', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).stdout;
    const defaultHost = /--host <ADDRESS>[\s\S]*?default:\s*"([^"]+)"/.exec(help)?.[1];
    expect(defaultHost).toBe('127.0.0.1');

    const host = /--host[ =](\S+?)["\s]/.exec(command)?.[1] ?? defaultHost;
    expect(['0.0.0.0', '::']).toContain(host);
  });
});

describe('docker-compose.yml: the EventStoreDB service', () => {
  const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  const service = compose.slice(compose.indexOf('\n  eventstore:'), compose.indexOf('\n  recon:'));

  it('pins a server version the client 6.2.1 supports and whose subscriptions say when they caught up (23.10 to 24.x), never :latest', () => {
    const image = /image: (\S+)/.exec(service)?.[1] ?? '';
    expect(image).not.toMatch(/:latest$|^[^:]+$/);
    const [major, minor] = (/:(\d+)\.(\d+)/.exec(image) ?? []).slice(1).map(Number);
    // 23.10: the first server that tells a subscription it caught up, which recon's reads of $all need
    expect(major! * 100 + minor!).toBeGreaterThanOrEqual(2310);
    expect(major).toBeLessThanOrEqual(24);
    // the environment variables of that image's generation (KURRENTDB_* are read by KurrentDB 25+ only)
    expect(service).toMatch(/EVENTSTORE_INSECURE: "true"/);
    expect(service).not.toMatch(/KURRENTDB_/);
  });

  it('has a health check, and recon waits for it to pass', () => {
    expect(service).toMatch(/healthcheck:\s*\n\s*#[^\n]*\n\s*test: \[.*\/health\/live/);
    const recon = compose.slice(compose.indexOf('\n  recon:'));
    expect(recon).toMatch(/eventstore: \{ condition: service_healthy \}/);
    expect(recon).toMatch(/EVENTSTORE_URL: esdb:\/\/eventstore:2113\?tls=false/);
  });
});
