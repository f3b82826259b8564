/**
 * Guidelines and codebooks (docs/guidelines.md): the Markdown an admin writes for a study of any kind, one row per
 * version. Editing adds a version; old versions are kept, so every submission can name the text it was made under.
 */
import { integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
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

/**
 * Which version of a study's guidelines each person has been shown (docs/guidelines.md, "In the workspaces"): the
 * panel opens by itself on a person's first visit to the study's workspace, and once more after a newer version,
 * on whatever browser they use. One row per person and study; `version` only grows.
 */
export const guidelineSeen = sqliteTable(
  "guideline_seen",
  {
    userId: text("user_id").notNull(),
    scope: text("scope", { enum: GUIDELINE_SCOPES }).notNull(),
    scopeId: integer("scope_id").notNull(),
    /** The highest version the panel was opened with for this person. */
    version: integer("version").notNull(),
    seenAt: integer("seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.scope, t.scopeId] })],
);
