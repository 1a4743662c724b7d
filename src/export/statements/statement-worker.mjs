// The entry of a statement worker thread (statement-pool.ts). A worker thread does not inherit the main
// thread's module hooks or modules: its main is loaded as bin/recon.mjs loads the command line (compiled or tsx).
import { importSource } from '../../../bin/sources.mjs';

await importSource(new URL('./statement-worker.ts', import.meta.url).href);
