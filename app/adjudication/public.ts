/**
 * What other protocols may use of adjudication that runs anywhere (docs/architecture.md, "Public modules"): pure
 * functions, types and constants, safe in a page, a command and another protocol's domain code. Its services are
 * in public.server.ts; everything else in app/adjudication/ is its own.
 */
export { annotatorOrder, MAX_ANNOTATOR_ORDER_SEED } from "./domain/annotator-order";
