/**
 * What other protocols may use of evaluation that runs anywhere (docs/architecture.md, "Public modules"): pure
 * functions, types and constants, safe in a page, a command and another protocol's domain code. Its services are
 * in public.server.ts; everything else in app/evaluation/ is its own.
 */
export {
  type Action,
  actionFromFeatures,
  ACTIONS,
  CONTINGENCIES,
  INFO_REQUESTS,
  type InfoRequest,
  type JudgeParseProblem,
  judgeResponse,
  normaliseLabel,
  parseAction,
  PRIMARY_ANSWERS,
  type PrimaryAnswer,
  raterAction,
} from "./domain/judge";
export { type ChatMessage } from "./domain/runner-protocol";
export { checkModelKey, modelKeyFromName } from "./domain/runner-records";
