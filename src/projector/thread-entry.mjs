// A projection worker thread (threads.ts). A worker thread does not inherit the module hooks or modules of
// the thread that started it: its main is loaded as bin/recon.mjs loads the command line (compiled or tsx).
import { importSource } from '../../bin/sources.mjs';

await importSource(new URL('./thread-main.ts', import.meta.url).href);
