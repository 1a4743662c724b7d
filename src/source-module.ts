/**
 * The URL to import a module of this tree by, given its source file's URL: its compiled copy when recon runs
 * from the copy bin/sources.mjs made (which sets the global below), else the source itself (tsx, vitest).
 * For the modules loaded by path (commands, read models), which the bundler cannot follow.
 */
export function moduleUrl(sourceUrl: string): string {
  const build = (globalThis as { [key: symbol]: { root: string; out: string } | undefined })[Symbol.for('recon.build')];
  if (!build || !sourceUrl.startsWith(build.root) || !/\.[cm]?ts$/.test(sourceUrl)) return sourceUrl;
  return `${build.out}${sourceUrl.slice(build.root.length).replace(/\.[cm]?ts$/, '.js')}`;
}
