/** What MENTAT gives shared code (docs/architecture.md, "Registration"): the guidelines of question banks. */
import { eq, sql } from "drizzle-orm";
import { visibleMentatQuestions, visibleMentatBanks } from "../../db/schema-visible";
import { preparedOn } from "../platform/db.server";
import type { GuidelineScopeRegistration } from "../platform/registry.server";

const questionBank = preparedOn((db) =>
  db
    .select({ s: visibleMentatQuestions.bankId })
    .from(visibleMentatQuestions)
    .where(eq(visibleMentatQuestions.id, sql.placeholder("id")))
    .prepare(),
);

export const MENTAT_BANK_GUIDELINES: GuidelineScopeRegistration = {
  scope: "mentat_bank",
  studyExists: (db, id) =>
    db.select({ id: visibleMentatBanks.id }).from(visibleMentatBanks).where(eq(visibleMentatBanks.id, id)).get() !==
    undefined,
  workspaces: ["mentat_rating"],
  studyOfItem: (db, _workspace, itemId) => questionBank(db).get({ id: itemId })?.s ?? null,
};
