#!/usr/bin/env node
// Runs the TypeScript sources with no build step: from a copy compiled on the first start after a change,
// or through tsx (bin/sources.mjs), so `npx recon` works right after `npm ci`.
import { importSource } from './sources.mjs';

const { main } = await importSource(new URL('../src/cli/main.ts', import.meta.url).href);
await main(process.argv);
