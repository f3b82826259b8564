/** A MENTAT bank's panel of experts (docs/mentat.md#expert-panels); the shared rules are in app/expert-panel. */
import { eq } from "drizzle-orm";
import { mentatBankRaters, mentatQuestions, mentatRatings } from "../../db/schema";
import type { MentatDomain } from "../expert-panel/domain/expert-scales";
import type { Db } from "../platform/db.server";
import {
  addPanelRaters,
  listPanelMembers,
  removePanelRater,
  type PanelMember,
  panelStore,
} from "../expert-panel/expert-panel.server";
import { getBank } from "./banks.server";

const BANK_PANEL = panelStore("mentat_bank", {
  table: mentatBankRaters,
  group: mentatBankRaters.bankId,
  rater: mentatBankRaters.raterId,
  key: "bankId",
});

/** Every user with the rater role, with their membership and progress on this bank (admin view). */
export function listBankPanel(db: Db, bankId: number): PanelMember[] {
  const bank = getBank(db, bankId);
  if (!bank) return [];
  const members = BANK_PANEL.memberIds(db, bankId);
  const ratings = db
    .select({ raterId: mentatRatings.raterId, status: mentatRatings.status, domain: mentatQuestions.domain })
    .from(mentatRatings)
    .innerJoin(mentatQuestions, eq(mentatQuestions.id, mentatRatings.questionId))
    .where(eq(mentatQuestions.bankId, bankId))
    .all()
    .filter((r) => bank.preferenceDomains.includes(r.domain as MentatDomain));
  return listPanelMembers(db, members, ratings);
}

/** Adds experts (users with the rater role) to a bank's panel; members already on it are left alone. */
export function addBankRaters(
  db: Db,
  input: { bankId: number; raterIds: string[]; actorId: string | null; now?: number },
): number {
  const { bankId: id, ...rest } = input;
  return addPanelRaters(db, BANK_PANEL, { id, ...rest }, "Only active users with the rater role can rate questions.");
}

/** Takes an expert off a bank's panel; the ratings they submitted stay and still count. */
export function removeBankRater(
  db: Db,
  input: { bankId: number; raterId: string; actorId: string | null; now?: number },
): void {
  const { bankId: id, ...rest } = input;
  removePanelRater(db, BANK_PANEL, { id, ...rest });
}
