import { z } from 'zod';

/**
 * An object of RECON_CONFIG: a key it does not know is refused with the keys it does, since zod's plain object
 * drops it and a mistyped setting (`matchWindowDay`) would leave its default in force without a word.
 */
export function configObject<T extends z.core.$ZodLooseShape>(shape: T) {
  const expected = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown key; expected one of ${expected}` : undefined),
  });
}

/** A key as it may be printed: a plain name as it is, anything else quoted and cut (it is the file's text). */
const keyText = (key: string): string => (/^[A-Za-z0-9_$-]{1,80}$/.test(key) ? key : JSON.stringify(key.slice(0, 80)));

/**
 * A schema's issues as `path: message` lines under `prefix` (e.g. "bank"), an unknown key named by its own path
 * (`bank.payouts.matchWindowDay: unknown key; …`) rather than by the object holding it.
 */
export function issueLines(prefix: string, issues: readonly z.core.$ZodIssue[]): string[] {
  const at = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter((p) => p !== '').join('.');
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => `${at([...i.path, keyText(k)])}: ${i.message}`)
      : [`${at(i.path) || '(root)'}: ${i.message}`],
  );
}
