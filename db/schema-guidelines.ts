/**
 * Guidelines and codebooks (docs/guidelines.md): the Markdown an admin writes for a study of any kind, one row per
 * version. Editing adds a version; old versions are kept, so every submission can name the text it was made under.
 */
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { GUIDELINE_SCOPES } from "./vocabulary";

export const guidelineVersions = sqliteTable(
  "guideline_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The kind of study: a Safe-Psych study, a judge-validation set, a screening study, a MENTAT bank, a case-review set. */
    scope: text("scope", { enum: GUIDELINE_SCOPES }).notNull(),
    /** The study's id in its own table. */
    scopeId: integer("scope_id").notNull(),
    /** 1, 2, … per (scope, scopeId). */
    version: integer("version").notNull(),
    /** Markdown; rendered without raw HTML. */
    body: text("body").notNull(),
    createdAt: integer("created_at").notNull(),
    /** Null for the text a study starts with (the template's defaults). */
    createdBy: text("created_by"),
  },
  (t) => [uniqueIndex("guideline_versions_scope_idx").on(t.scope, t.scopeId, t.version)],
);
