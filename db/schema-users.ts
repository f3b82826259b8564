/**
 * The users (docs/security.md): one file of its own, so that every schema file can reference it without importing
 * db/schema.ts, which re-exports them all.
 */
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  displayName: text("display_name").notNull(),
  passwordHash: text("password_hash").notNull(),
  active: integer("active", { mode: "boolean" }).notNull().default(true),
  createdAt: integer("created_at").notNull(),
  /**
   * The TOTP second factor (docs/security.md, "Second factor"): the shared secret (base32) once the user has
   * confirmed it with a code, and when. Null: no second factor.
   */
  totpSecret: text("totp_secret"),
  totpEnabledAt: integer("totp_enabled_at"),
  /** The last TOTP time step accepted, so that one code cannot be used twice. */
  totpLastStep: integer("totp_last_step"),
});
