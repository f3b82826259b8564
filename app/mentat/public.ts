/**
 * What other protocols may use of mentat that runs anywhere (docs/architecture.md, "Public modules"): pure
 * functions, types and constants, safe in a page, a command and another protocol's domain code. Its services are
 * in public.server.ts; everything else in app/mentat/ is its own.
 */
export { seedFromText } from "./domain/mentat";
