/**
 * SQL identifiers (schema, table, view names) quoted for PostgreSQL: the one way a name built at run time
 * (a projection's build schema) enters a statement. Values never go through here: they are parameters.
 */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
