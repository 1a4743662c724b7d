// How recon's TypeScript sources are run: from a compiled copy in node_modules/.cache/recon, made on the
// first start after any source changed, or through tsx when that copy cannot be made.
//
// Why: through tsx every start cost about 1.3 s of CPU before a command did anything (Node 20 runs tsx's
// module hooks in a thread of their own, and each of some 220 modules is resolved and loaded by a round trip
// to it). The compiled copy is a few dozen plain JavaScript files Node loads itself (docs/testing.md).
//
// Never stale: the copy's directory is named by a hash of the sources' content (every .ts/.mts/.js/.mjs/.json
// file under src/, projections/, jobs/, with package.json, tsconfig.json, this file and esbuild's version),
// computed at every start (about 25 ms of CPU); an edit gives a new name, so the next start builds anew, and a
// build compiles the very bytes that were hashed, never a file saved since. A build is
// written to a temporary directory and renamed into place, so a process never sees half a build and two
// starting at once both run (the second rename fails: that process uses the first one's).
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const SOURCE_DIRS = ['src', 'projections', 'jobs'];
const SOURCE_FILE = /\.(?:[cm]?ts|[cm]?js|json)$/;
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'recon');
/** Builds no start has used for this long are removed when a new one is made (a running process may need its own). */
const UNUSED_MS = 24 * 3600 * 1000;
/**
 * How often a running process marks its build used (well under UNUSED_MS). RECON_BUILD_MARK_EVERY_MS sets it
 * (a whole number of milliseconds) so that a test can watch the mark being made; nothing else should.
 */
const USED_EVERY_MS = /^[1-9]\d{0,9}$/.test(process.env.RECON_BUILD_MARK_EVERY_MS ?? '')
  ? Number(process.env.RECON_BUILD_MARK_EVERY_MS)
  : 3600 * 1000;
/** Where src/source-module.ts finds the compiled copy (a global: the sources cannot import this file). */
const BUILD = Symbol.for('recon.build');

/**
 * The modules imported by path rather than by an import the bundler follows: the command line, its commands
 * (read from their directory), the read models (likewise), the two worker threads' mains.
 */
function entryPoints() {
  const ts = (dir) =>
    readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
      .map((f) => path.join(ROOT, dir, f));
  return [
    path.join(ROOT, 'src/cli/main.ts'),
    ...ts('src/cli/commands'),
    ...ts('projections'),
    path.join(ROOT, 'src/projector/thread-main.ts'),
    path.join(ROOT, 'src/export/statements/statement-worker.ts'),
  ];
}

/**
 * The sources' hash, and the bytes it was made from (absolute path → content): the build compiles those very
 * bytes, so a file saved during a build can never be built under the name of the content before it.
 */
function sourceHash() {
  const hash = createHash('sha256');
  const esbuild = createRequire(import.meta.url).resolve('esbuild/package.json');
  hash.update(`${ROOT}\0${readFileSync(esbuild, 'utf8')}\0${readFileSync(fileURLToPath(import.meta.url))}`);
  const files = ['package.json', 'tsconfig.json'];
  for (const dir of SOURCE_DIRS)
    for (const e of readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true }))
      if (e.isFile() && SOURCE_FILE.test(e.name)) files.push(path.relative(ROOT, path.join(e.parentPath, e.name)));
  const contents = new Map();
  for (const f of files.sort()) {
    const bytes = readFileSync(path.join(ROOT, f));
    contents.set(path.join(ROOT, f), bytes);
    hash.update(`\0${f}\0`).update(bytes);
  }
  return { name: hash.digest('hex').slice(0, 24), contents };
}

/**
 * Each module keeps its source file's URL as `import.meta.url`, so what it finds beside itself (migrations,
 * fonts, console assets, the commands and projections directories, worker entries, createRequire) is found
 * as under tsx. Packages stay imports of node_modules, found from the cache inside it.
 */
async function build(outdir, contents) {
  const esbuild = await import('esbuild');
  const sourceUrl = {
    name: 'source-url',
    setup(b) {
      // the bytes hashed (sourceHash), not the file as it is now
      const text = (file) => (contents.get(file) ?? readFileSync(file)).toString('utf8');
      b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => ({
        contents: text(args.path).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: 'ts',
      }));
      b.onLoad({ filter: /\.(?:[cm]?js|json)$/ }, (args) =>
        contents.has(args.path)
          ? { contents: text(args.path), loader: args.path.endsWith('.json') ? 'json' : 'js' }
          : undefined,
      );
    },
  };
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: entryPoints(),
    outdir,
    outbase: ROOT,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // As tsx: function and class names kept (bundling renames clashing ones), source maps for stack traces.
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'silent',
    plugins: [sourceUrl],
  });
  absoluteSources(outdir);
}

/**
 * A source map names its sources relative to itself, and Node resolves them from the map's real path: where
 * node_modules is a link to another checkout's, a stack would name that checkout's files. Absolute URLs
 * name this tree's.
 */
function absoluteSources(outdir) {
  for (const name of readdirSync(outdir, { recursive: true })) {
    if (!name.endsWith('.map')) continue;
    const file = path.join(outdir, name);
    const map = JSON.parse(readFileSync(file, 'utf8'));
    map.sources = map.sources.map((s) => pathToFileURL(path.resolve(path.dirname(file), s)).href);
    writeFileSync(file, JSON.stringify(map));
  }
}

/** The compiled copy's directory, built if missing; undefined when it cannot be made. */
export async function compiledSources() {
  try {
    if (!findsOwnPackages()) return undefined;
    const sources = sourceHash();
    const dir = path.join(CACHE, sources.name);
    if (existsSync(dir)) {
      markUsed(dir);
      return dir;
    }
    const tmp = path.join(CACHE, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await build(tmp, sources.contents);
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(dir)) throw e;
    }
    removeUnused(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * The compiled copy imports packages from where it lies (the sources from where they lie): the same packages
 * only when the cache is inside this tree's own node_modules, which a copy of a tree that links its entries
 * one by one (node_modules/.cache among them) to another tree's is not. Such a tree runs through tsx.
 */
function findsOwnPackages() {
  mkdirSync(CACHE, { recursive: true });
  return path.dirname(path.dirname(realpathSync(CACHE))) === realpathSync(path.join(ROOT, 'node_modules'));
}

/** A build's time of last use is its directory's mtime (another user may run a tree it cannot write). */
function markUsed(dir) {
  try {
    utimesSync(dir, new Date(), new Date());
  } catch {}
}

/**
 * Removes builds (and temporary directories of killed builds) no start has used for a day. Best effort: the
 * new build is in place whatever happens here.
 */
function removeUnused(keep) {
  try {
    for (const name of readdirSync(CACHE)) {
      const dir = path.join(CACHE, name);
      const used = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (dir !== keep && Date.now() - used > UNUSED_MS) rmSync(dir, { recursive: true, force: true });
    }
  } catch {}
}

/**
 * Imports a source module (a file URL under this tree, one of entryPoints()): its compiled copy, or the
 * source itself through tsx when no copy could be made.
 */
export async function importSource(url) {
  const dir = await compiledSources();
  const compiled = dir && path.join(dir, path.relative(ROOT, fileURLToPath(url))).replace(/\.[cm]?ts$/, '.js');
  if (compiled && existsSync(compiled)) {
    process.setSourceMapsEnabled(true);
    globalThis[BUILD] = { root: `${pathToFileURL(ROOT).href}/`, out: `${pathToFileURL(dir).href}/` };
    // a worker running for weeks imports some modules late (a command's, a backend's): its build is marked
    // used while it runs, so no other start removes it as unused (removeUnused)
    setInterval(() => markUsed(dir), USED_EVERY_MS).unref();
    return import(pathToFileURL(compiled).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(url);
}
