/**
 * SQL identifiers (schema, table, view names) quoted for PostgreSQL, for the statements that are text: a
 * projection's views (the contract gives them as text), a COPY (it takes no parameters) and what those name.
 * A statement written as a tagged template names them with the driver's own `sql(name)`, never with these.
 * Values never go through here: they are parameters.
 */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `schema.table`, each quoted: a table of a projection's build schema, as the bulk writer and views name it. */
export function qualified(schema: string, table: string): string {
  return `${ident(schema)}.${ident(table)}`;
}
