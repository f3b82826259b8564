/**
 * What other protocols and the composition root (app/protocols.server.ts) may use of gold's services
 * (docs/architecture.md, "Public modules"). Its pure parts are in public.ts; everything else in app/gold/ is its
 * own.
 */
export { labelOfAnnotation, onCaseAnnotationsComplete } from "./outcomes.server";
