// The types of bin/sources.mjs, for the TypeScript that imports it (test/support/global-setup.ts).
export function compiledSources(): Promise<string | undefined>;
export function importSource(url: string): Promise<unknown>;
