export interface ConfigIssue {
  readonly variable: string;
  readonly problem: string;
  readonly example: string;
}

/**
 * How loadConfig reads the environment: each variable trimmed (blank is unset), each problem collected with
 * the variable's documented example, so that one message names them all.
 */
export interface EnvReader {
  readonly env: NodeJS.ProcessEnv;
  readonly issues: ConfigIssue[];
  problem(variable: string, text: string): void;
  get(name: string): string | undefined;
  /** a whole number from `min` to `max`; the fallback when unset or refused */
  int(name: string, fallback: number, min: number, max: number): number;
  /** a URL of one of `protocols`, its credentials as the drivers read them; undefined when unset or refused */
  url(name: string, protocols: readonly string[]): string | undefined;
}

export function envReader(
  env: NodeJS.ProcessEnv,
  exampleOf: (variable: string) => string,
  secrets: readonly string[],
): EnvReader {
  const issues: ConfigIssue[] = [];
  const problem = (variable: string, text: string) =>
    issues.push({ variable, problem: text, example: exampleOf(variable) });
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = get(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      problem(name, `expected a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return Number(v);
  };
  const url = (name: string, protocols: readonly string[]): string | undefined => {
    const v = get(name);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      const refused = credentialsProblem(v, u);
      if (refused) problem(name, refused);
      return refused ? undefined : v;
    } catch {
      problem(
        name,
        `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}${secrets.includes(name) ? '' : `, got ${JSON.stringify(v)}`}`,
      );
      return undefined;
    }
  };
  return { env, issues, problem, get, int, url };
}

/**
 * What the drivers do with the credentials, checked here so that the message names the variable: they
 * percent-decode them, and split the address at the first "@".
 */
function credentialsProblem(v: string, u: URL): string | null {
  const userinfo = /^[a-z+]+:\/\/([^/?#]*)@/i.exec(v)?.[1] ?? '';
  if (userinfo.includes('@')) return 'the user name or password holds "@": write it percent-encoded (%40)';
  try {
    decodeURIComponent(u.username);
    decodeURIComponent(u.password);
    return null;
  } catch {
    return 'the user name or password holds a "%" that is not a percent-encoding: write it as %25';
  }
}
