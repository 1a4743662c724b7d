// The entry of a statement worker thread (statement-pool.ts). A worker thread does not inherit the main
// thread's module hooks, so TypeScript is loaded through tsx here, as bin/recon.mjs does for the process.
import { register } from 'tsx/esm/api';

register();
await import('./statement-worker.ts');
