/** A MENTAT bank's panel of experts (docs/mentat.md#expert-panels); the shared rules are in app/expert-panel. */
import { eq } from "drizzle-orm";
import { visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import type { MentatDomain } from "../expert-panel/domain/expert-scales";
import type { Db } from "../platform/db.server";
import { expertPanel, type PanelMember } from "../expert-panel/expert-panel.server";
import { BANK_PANEL, getBank } from "./banks.server";

const PANEL = expertPanel(BANK_PANEL, "bankId", {
  refusal: "Only active users with the rater role can rate questions.",
  removed: "Removed from the panel; their submitted ratings are kept.",
});

/** Every user with the rater role, with their membership and progress on this bank (admin view). */
export function listBankPanel(db: Db, bankId: number): PanelMember[] {
  const bank = getBank(db, bankId);
  if (!bank) return [];
  const ratings = db
    .select({
      raterId: visibleMentatRatings.raterId,
      status: visibleMentatRatings.status,
      domain: visibleMentatQuestions.domain,
    })
    .from(visibleMentatRatings)
    .innerJoin(visibleMentatQuestions, eq(visibleMentatQuestions.id, visibleMentatRatings.questionId))
    .where(eq(visibleMentatQuestions.bankId, bankId))
    .all()
    .filter((r) => bank.preferenceDomains.includes(r.domain as MentatDomain));
  return PANEL.list(db, bankId, ratings);
}

/** Adds experts (users with the rater role) to a bank's panel; members already on it are left alone. */
export const addBankRaters = PANEL.add;

/** Takes an expert off a bank's panel; the ratings they submitted stay and still count. */
export const removeBankRater = PANEL.remove;

/** The bank page's add or remove of one expert, with the message to show. */
export const changeBankPanel = PANEL.change;
