/** Roles (docs/architecture.md#roles-and-blinding) and adjudication modes (docs/safe-psych.md#disagreement-and-adjudication): shared by the schema, the services and the pages; stored as db/vocabulary.ts lists them. */
export { ADJUDICATION_MODES, ROLES, type AdjudicationMode, type Role } from "../../db/vocabulary";
