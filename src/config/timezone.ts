import { IANAZone } from 'luxon';

/**
 * Why RECON_TIMEZONE cannot be the business time zone, or null when it can. recon cuts days and months with
 * luxon (ICU's zones) and, in a few queries, with PostgreSQL's `at time zone`, which reads a name without "/"
 * as a time zone abbreviation first: CET is +01:00 all year there (ICU: Central European with summer time), IST
 * is Israel (ICU: India), PST is −08:00 (ICU: Los Angeles), AET unknown. So only an Area/Location name, the one
 * zone both read alike, and UTC or GMT are taken.
 */
export function timezoneProblem(zone: string): string | null {
  if (!IANAZone.isValidZone(zone)) return `expected an IANA time zone name, got ${JSON.stringify(zone)}`;
  if (zone.includes('/') || /^(UTC|GMT)$/i.test(zone)) return null;
  return `expected an IANA time zone name of the form Area/Location (e.g. Europe/Paris, not CET; Asia/Kolkata, not IST), got ${JSON.stringify(zone)}: PostgreSQL reads a name without "/" as an abbreviation of another or a fixed offset, so its days and months would not be recon's`;
}
