/** The password of a connection string, as written and decoded; none when it has none. */
export function urlPasswords(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const raw = new URL(text).password;
    if (!raw) return [];
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // left as written
    }
    return [...new Set([raw, decoded])];
  } catch {
    return [];
  }
}
