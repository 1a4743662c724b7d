// A projection worker thread (threads.ts): the sources are TypeScript, run through tsx as bin/recon.mjs
// runs them (a worker thread does not inherit the module hooks of the thread that started it).
import { register } from 'tsx/esm/api';

register();
await import('./thread-main.ts');
