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
