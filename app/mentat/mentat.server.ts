/**
 * MENTAT question banks (docs/mentat.md): import, the expert panel, the experts' option ratings (drafts, atomic
 * submission, revisions, audit), demographic variant sets, Bradley–Terry label fits and the evaluation export.
 *
 * Blinding: everything an expert loads goes through getRaterQuestion / listRaterBanks, which select the expert's own
 * rating only and never the intended answer, other experts' ratings or identities, or fitted labels. Ownership is
 * part of every rater query (panel membership and the rater's id), so another question simply is not found.
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { createHash } from "node:crypto";
import { z } from "zod";
import {
  mentatBankRaters,
  mentatBanks,
  mentatDatasets,
  mentatFits,
  mentatQuestions,
  mentatRatings,
  mentatVariants,
  users,
} from "../../db/schema";
import {
  fitPreferenceLabels,
  HBT_DEFAULTS,
  type AnnotationRow,
  type PreferenceLabels,
  type RaterEffects,
} from "./domain/bradley-terry";
import type { CsvIssue } from "../expert-panel/domain/expert-csv";
import {
  DEFAULT_AGES,
  DEFAULT_PREFERENCE_DOMAINS,
  DEFAULT_RACES,
  MENTAT_DOMAINS,
  OPTION_COUNT,
  type ExpertWorkState,
  type Gender,
  type MentatDomain,
  type VariantDimension,
} from "../expert-panel/domain/expert-scales";
import {
  annotationRowsHash,
  checkExpansionParams,
  evaluationRecord,
  expandVariants,
  gendersOf,
  intendedLabels,
  optionAgreement,
  parseQuestionBankCsv,
  questionContentHash,
  raterPresentation,
  renderQuestion,
  type ExpansionParams,
  type QuestionAgreement,
  type QuestionLabels,
  type QuestionTexts,
  type Variant,
} from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { diff, recordEvent } from "../audit/audit.server";
import { nextOpenItem, progressOf, type SaveResult } from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter, writeTransaction } from "../work-items/engine.server";
import {
  addPanelRaters,
  listPanelMembers,
  removePanelRater,
  type PanelMember,
  type PanelStore,
} from "../expert-panel/expert-panel.server";
import { StudyNameSchema } from "../annotation/studies.server";
import { ServiceError } from "../accounts/users.server";

export const BankNameSchema = StudyNameSchema;

export interface BankSummary {
  id: number;
  name: string;
  description: string;
  preferenceDomains: MentatDomain[];
  seed: number;
  numQuestions: number;
  numRated: number;
  numRaters: number;
  numSubmitted: number;
  createdAt: number;
}

function domainsOf(json: string): MentatDomain[] {
  return (JSON.parse(json) as string[]).filter((d): d is MentatDomain => MENTAT_DOMAINS.includes(d as MentatDomain));
}

export function listBanks(db: Db): BankSummary[] {
  const banks = db.select().from(mentatBanks).orderBy(asc(mentatBanks.name)).all();
  return banks.map((b) => {
    const preferenceDomains = domainsOf(b.preferenceDomains);
    const questions = db
      .select({ id: mentatQuestions.id, domain: mentatQuestions.domain })
      .from(mentatQuestions)
      .where(eq(mentatQuestions.bankId, b.id))
      .all();
    const rated = questions.filter((q) => preferenceDomains.includes(q.domain as MentatDomain));
    const raters = db
      .select({ id: mentatBankRaters.raterId })
      .from(mentatBankRaters)
      .where(eq(mentatBankRaters.bankId, b.id))
      .all();
    const submitted = rated.length
      ? db
          .select({ id: mentatRatings.id })
          .from(mentatRatings)
          .where(
            and(
              inArray(
                mentatRatings.questionId,
                rated.map((q) => q.id),
              ),
              eq(mentatRatings.status, "submitted"),
            ),
          )
          .all().length
      : 0;
    return {
      id: b.id,
      name: b.name,
      description: b.description,
      preferenceDomains,
      seed: b.seed,
      numQuestions: questions.length,
      numRated: rated.length,
      numRaters: raters.length,
      numSubmitted: submitted,
      createdAt: b.createdAt,
    };
  });
}

export function getBank(db: Db, id: number): BankSummary | null {
  return listBanks(db).find((b) => b.id === id) ?? null;
}

export function requireBankByName(db: Db, name: string): BankSummary {
  const banks = listBanks(db);
  const bank = banks.find((b) => b.name === name.trim());
  if (!bank)
    throw new ServiceError(
      `No question bank named "${name}".${
        banks.length ? ` Banks: ${banks.map((b) => `"${b.name}"`).join(", ")}.` : " There are none yet."
      }`,
      "bank",
      404,
    );
  return bank;
}

// ---------------------------------------------------------------------------------------------------------------
// Import

export interface BankImportInput {
  bankName: string;
  text: string;
  actorId: string | null;
  /** Applied when the bank is created, or changed when given for an existing bank. */
  preferenceDomains?: MentatDomain[];
  seed?: number;
  dryRun?: boolean;
  now?: number;
}

export type BankImportResult =
  | { ok: false; errors: CsvIssue[]; warnings: CsvIssue[] }
  | {
      ok: true;
      bankId: number | null;
      bankName: string;
      createdBank: boolean;
      created: number;
      updated: number;
      unchanged: number;
      total: number;
      warnings: CsvIssue[];
      written: boolean;
    };

/**
 * Imports a question-bank CSV into a bank (created if needed). The whole file is validated first and nothing is
 * written on any error. Questions are matched by id: new ones are added, changed ones updated, unchanged ones kept;
 * a question that already has ratings cannot change its text, options or answer (the ratings would no longer fit).
 * Questions missing from the file are kept. Positions follow the file.
 */
export function importQuestionBank(db: Db, input: BankImportInput): BankImportResult {
  const name = BankNameSchema.safeParse(input.bankName);
  if (!name.success) return { ok: false, errors: [{ line: 0, message: name.error.issues[0]!.message }], warnings: [] };
  if (input.seed !== undefined && !(Number.isInteger(input.seed) && input.seed >= 0 && input.seed < 2 ** 31))
    return {
      ok: false,
      errors: [{ line: 0, message: "the seed must be a whole number from 0 to 2147483647." }],
      warnings: [],
    };
  const parsed = parseQuestionBankCsv(input.text);
  if (parsed.errors.length) return { ok: false, errors: parsed.errors, warnings: parsed.warnings };
  const now = input.now ?? Date.now();
  return writeTransaction(db, 
    (tx): BankImportResult => {
      const bank = tx.select().from(mentatBanks).where(eq(mentatBanks.name, name.data)).get();
      const existing = bank ? tx.select().from(mentatQuestions).where(eq(mentatQuestions.bankId, bank.id)).all() : [];
      const byId = new Map(existing.map((q) => [q.externalId, q]));
      const errors: CsvIssue[] = [];
      let created = 0;
      let updated = 0;
      let unchanged = 0;
      const plans = parsed.questions.map((q, position) => {
        const hash = questionContentHash(q);
        const old = byId.get(q.externalId);
        if (!old) {
          created++;
          return { q, position, hash, old, kind: "create" as const };
        }
        if (old.contentHash === hash && old.notes === q.notes && old.position === position) {
          unchanged++;
          return { q, position, hash, old, kind: "same" as const };
        }
        if (old.contentHash !== hash) {
          const rated = tx
            .select({ id: mentatRatings.id })
            .from(mentatRatings)
            .where(eq(mentatRatings.questionId, old.id))
            .get();
          if (rated)
            errors.push({
              line: q.line,
              message: `question "${q.externalId}" already has ratings: its text, domain, options and answer cannot change. Give the changed question a new id.`,
            });
        }
        updated++;
        return { q, position, hash, old, kind: "update" as const };
      });
      if (errors.length) return { ok: false, errors, warnings: parsed.warnings };
      const summary = {
        bankName: name.data,
        createdBank: !bank,
        created,
        updated,
        unchanged,
        total: parsed.questions.length,
        warnings: parsed.warnings,
      };
      if (input.dryRun) return { ok: true, bankId: bank?.id ?? null, ...summary, written: false };

      let bankId: number;
      if (!bank) {
        bankId = tx
          .insert(mentatBanks)
          .values({
            name: name.data,
            preferenceDomains: JSON.stringify(input.preferenceDomains ?? DEFAULT_PREFERENCE_DOMAINS),
            seed: input.seed ?? 1,
            createdAt: now,
          })
          .returning({ id: mentatBanks.id })
          .get().id;
        recordEvent(tx, {
          actorId: input.actorId,
          entity: "mentat_bank",
          entityId: bankId,
          action: "create",
          changes: {
            name: name.data,
            preferenceDomains: input.preferenceDomains ?? DEFAULT_PREFERENCE_DOMAINS,
            seed: input.seed ?? 1,
          },
          at: now,
        });
      } else {
        bankId = bank.id;
        const changes: Record<string, unknown> = {};
        if (input.preferenceDomains) changes.preferenceDomains = JSON.stringify(input.preferenceDomains);
        if (input.seed !== undefined) changes.seed = input.seed;
        const d = diff({ preferenceDomains: bank.preferenceDomains, seed: bank.seed }, changes);
        if (Object.keys(d).length) {
          tx.update(mentatBanks).set(changes).where(eq(mentatBanks.id, bank.id)).run();
          recordEvent(tx, {
            actorId: input.actorId,
            entity: "mentat_bank",
            entityId: bank.id,
            action: "settings",
            changes: d,
            at: now,
          });
        }
      }
      // Questions not in this file move after the file's questions, in their old order.
      const inFile = new Set(parsed.questions.map((q) => q.externalId));
      existing
        .filter((q) => !inFile.has(q.externalId))
        .sort((a, b) => a.position - b.position)
        .forEach((q, i) =>
          tx
            .update(mentatQuestions)
            .set({ position: parsed.questions.length + i })
            .where(eq(mentatQuestions.id, q.id))
            .run(),
        );
      for (const p of plans) {
        const values = {
          domain: p.q.domain,
          texts: JSON.stringify(p.q.texts),
          options: JSON.stringify(p.q.options),
          intendedAnswer: p.q.answer,
          notes: p.q.notes,
          contentHash: p.hash,
          position: p.position,
        };
        if (p.kind === "create") {
          const id = tx
            .insert(mentatQuestions)
            .values({ bankId, externalId: p.q.externalId, ...values, createdAt: now, updatedAt: now })
            .returning({ id: mentatQuestions.id })
            .get().id;
          recordEvent(tx, {
            actorId: input.actorId,
            entity: "mentat_question",
            entityId: id,
            action: "create",
            changes: { externalId: p.q.externalId, domain: p.q.domain, contentHash: p.hash },
            at: now,
          });
        } else if (p.kind === "update") {
          tx.update(mentatQuestions)
            .set({ ...values, updatedAt: now })
            .where(eq(mentatQuestions.id, p.old!.id))
            .run();
          recordEvent(tx, {
            actorId: input.actorId,
            entity: "mentat_question",
            entityId: p.old!.id,
            action: "update",
            changes: diff(
              { domain: p.old!.domain, contentHash: p.old!.contentHash, position: p.old!.position },
              { domain: p.q.domain, contentHash: p.hash, position: p.position },
            ),
            at: now,
          });
        }
      }
      return { ok: true, bankId, ...summary, written: true };
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The panel

/** Every user with the rater role, with their membership and progress on this bank (admin view). */
export function listBankPanel(db: Db, bankId: number): PanelMember[] {
  const bank = getBank(db, bankId);
  if (!bank) return [];
  const members = new Set(
    db
      .select({ id: mentatBankRaters.raterId })
      .from(mentatBankRaters)
      .where(eq(mentatBankRaters.bankId, bankId))
      .all()
      .map((m) => m.id),
  );
  const ratings = db
    .select({ raterId: mentatRatings.raterId, status: mentatRatings.status, domain: mentatQuestions.domain })
    .from(mentatRatings)
    .innerJoin(mentatQuestions, eq(mentatQuestions.id, mentatRatings.questionId))
    .where(eq(mentatQuestions.bankId, bankId))
    .all()
    .filter((r) => bank.preferenceDomains.includes(r.domain as MentatDomain));
  return listPanelMembers(db, members, ratings);
}

const BANK_PANEL: PanelStore = {
  entity: "mentat_bank",
  has: (tx, bankId, raterId) =>
    Boolean(
      tx
        .select()
        .from(mentatBankRaters)
        .where(and(eq(mentatBankRaters.bankId, bankId), eq(mentatBankRaters.raterId, raterId)))
        .get(),
    ),
  add: (tx, bankId, member) =>
    tx
      .insert(mentatBankRaters)
      .values({ bankId, ...member })
      .run(),
  remove: (tx, bankId, raterId) =>
    tx
      .delete(mentatBankRaters)
      .where(and(eq(mentatBankRaters.bankId, bankId), eq(mentatBankRaters.raterId, raterId)))
      .run().changes > 0,
};

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

// ---------------------------------------------------------------------------------------------------------------
// The expert's side

export interface RaterQuestionRow {
  questionId: number;
  bankId: number;
  bankName: string;
  externalId: string;
  position: number;
  domain: MentatDomain;
  state: ExpertWorkState;
  updatedAt: number | null;
}

/** The questions an expert is asked to rate: the preference-domain questions of the banks whose panel they are on. */
export function listRaterQuestions(db: Db, userId: string): RaterQuestionRow[] {
  const rows = db
    .select({
      questionId: mentatQuestions.id,
      bankId: mentatBanks.id,
      bankName: mentatBanks.name,
      preferenceDomains: mentatBanks.preferenceDomains,
      externalId: mentatQuestions.externalId,
      position: mentatQuestions.position,
      domain: mentatQuestions.domain,
      status: mentatRatings.status,
      updatedAt: mentatRatings.updatedAt,
    })
    .from(mentatBankRaters)
    .innerJoin(mentatBanks, eq(mentatBanks.id, mentatBankRaters.bankId))
    .innerJoin(mentatQuestions, eq(mentatQuestions.bankId, mentatBanks.id))
    .leftJoin(mentatRatings, and(eq(mentatRatings.questionId, mentatQuestions.id), eq(mentatRatings.raterId, userId)))
    .where(eq(mentatBankRaters.raterId, userId))
    .orderBy(asc(mentatBanks.name), asc(mentatQuestions.position))
    .all();
  return rows
    .filter((r) => domainsOf(r.preferenceDomains).includes(r.domain as MentatDomain))
    .map(({ preferenceDomains: _, status, ...r }) => ({
      ...r,
      domain: r.domain as MentatDomain,
      state: (status ?? "not_started") as ExpertWorkState,
    }));
}

export interface RaterQuestionView {
  question: {
    id: number;
    externalId: string;
    bankName: string;
    domain: MentatDomain;
    /** The question as this expert sees it (their gender variant, other demographics left out). */
    text: string;
    /** The options in this expert's order. */
    options: string[];
  };
  state: ExpertWorkState;
  /** This expert's scores, in the order of `options` (null = not rated yet). */
  scores: (number | null)[];
  comment: string;
  version: number;
  updatedAt: number | null;
  nextQuestionId: number | null;
  progress: { done: number; total: number };
}

interface OwnedQuestion {
  id: number;
  bankId: number;
  bankName: string;
  seed: number;
  externalId: string;
  domain: MentatDomain;
  texts: QuestionTexts;
  options: string[];
}

/** The question if the expert is on its bank's panel and it is a preference-domain question; else null. */
function findOwnedQuestion(db: DbOrTx, userId: string, questionId: number): OwnedQuestion | null {
  const row = db
    .select({
      id: mentatQuestions.id,
      bankId: mentatBanks.id,
      bankName: mentatBanks.name,
      seed: mentatBanks.seed,
      preferenceDomains: mentatBanks.preferenceDomains,
      externalId: mentatQuestions.externalId,
      domain: mentatQuestions.domain,
      texts: mentatQuestions.texts,
      options: mentatQuestions.options,
    })
    .from(mentatQuestions)
    .innerJoin(mentatBanks, eq(mentatBanks.id, mentatQuestions.bankId))
    .innerJoin(mentatBankRaters, and(eq(mentatBankRaters.bankId, mentatBanks.id), eq(mentatBankRaters.raterId, userId)))
    .where(eq(mentatQuestions.id, questionId))
    .get();
  if (!row || !domainsOf(row.preferenceDomains).includes(row.domain as MentatDomain)) return null;
  return {
    id: row.id,
    bankId: row.bankId,
    bankName: row.bankName,
    seed: row.seed,
    externalId: row.externalId,
    domain: row.domain as MentatDomain,
    texts: JSON.parse(row.texts),
    options: JSON.parse(row.options),
  };
}

function presentationFor(
  q: OwnedQuestion,
  userId: string,
  stored?: { optionOrder: string; shownGender: string | null },
) {
  if (stored)
    return { optionOrder: JSON.parse(stored.optionOrder) as number[], gender: stored.shownGender as Gender | null };
  return raterPresentation(q.seed, q.externalId, userId, gendersOf(q.texts));
}

/** One question for an expert, blinded: their own rating only; null when it is not theirs to rate. */
export function getRaterQuestion(db: Db, input: { userId: string; questionId: number }): RaterQuestionView | null {
  const q = findOwnedQuestion(db, input.userId, input.questionId);
  if (!q) return null;
  const row = db
    .select()
    .from(mentatRatings)
    .where(and(eq(mentatRatings.questionId, q.id), eq(mentatRatings.raterId, input.userId)))
    .get();
  const { optionOrder, gender } = presentationFor(q, input.userId, row);
  const scores: (number | null)[] = row ? JSON.parse(row.scores) : new Array(OPTION_COUNT).fill(null);
  const mine = listRaterQuestions(db, input.userId);
  const at = mine.findIndex((r) => r.questionId === q.id);
  return {
    question: {
      id: q.id,
      externalId: q.externalId,
      bankName: q.bankName,
      domain: q.domain,
      text: renderQuestion(q.texts, { gender, age: null, race: null }),
      options: optionOrder.map((i) => q.options[i]!),
    },
    state: (row?.status ?? "not_started") as ExpertWorkState,
    scores: optionOrder.map((i) => scores[i] ?? null),
    comment: row?.comment ?? "",
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextQuestionId: nextOpenItem(mine, at)?.questionId ?? null,
    progress: progressOf(mine),
  };
}

export const OptionRatingSchema = z.object({
  /** In the order the expert saw the options. */
  scores: z
    .array(
      z
        .number()
        .int("Scores are whole numbers.")
        .min(0, "Scores run from 0 to 100.")
        .max(100, "Scores run from 0 to 100.")
        .nullable(),
    )
    .length(OPTION_COUNT),
  comment: z.string().max(5000, "A comment has at most 5000 characters.").default(""),
});
export type OptionRatingValues = z.infer<typeof OptionRatingSchema>;

export type RatingSaveResult = SaveResult;

type RatingRow = typeof mentatRatings.$inferSelect;

/** A question the expert may rate, their own rating row, and the presentation (option order, gender) they see. */
interface RatingItem {
  q: OwnedQuestion;
  row: RatingRow | undefined;
  optionOrder: number[];
  gender: Gender | null;
}

/**
 * The option-rating workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine").
 * The page sends scores in the order the expert saw the options; they are stored in the bank's order.
 */
const optionRatingWork: WorkItemAdapter<RatingItem, RatingRow, OptionRatingValues> = {
  entity: "mentat_rating",
  noun: "rating",
  guidelines: (item) => ({ scope: "mentat_bank", scopeId: item.q.bankId }),
  find(tx, userId, questionId) {
    const q = findOwnedQuestion(tx, userId, questionId);
    if (!q) return null;
    const row = tx
      .select()
      .from(mentatRatings)
      .where(and(eq(mentatRatings.questionId, q.id), eq(mentatRatings.raterId, userId)))
      .get();
    return { q, row, ...presentationFor(q, userId, row) };
  },
  row: (_tx, _userId, item) => item.row,
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) =>
    row ? { scores: JSON.parse(row.scores), comment: row.comment } : { scores: new Array(OPTION_COUNT).fill(null), comment: "" },
  normalise(values, item) {
    const scores: (number | null)[] = new Array(OPTION_COUNT).fill(null);
    item.optionOrder.forEach((original, shown) => (scores[original] = values.scores[shown] ?? null));
    return { ...values, scores };
  },
  check(_tx, item, values) {
    const missing = values.scores.map((s, i) => (s === null ? i : -1)).filter((i) => i >= 0);
    if (!missing.length) return { ok: true, values };
    // Field names follow the page's order, like the values it sent.
    const shownOrder = item.optionOrder;
    return {
      ok: false,
      message: `Rate every option before submitting (${missing.length} not rated yet). 0 is fine for an option you would never choose.`,
      errors: Object.fromEntries(missing.map((i) => [`score${shownOrder.indexOf(i)}`, "Not rated yet."])),
    };
  },
  audited: (v) => ({ scores: v.scores, comment: v.comment }),
  freeText: ["comment"],
  write(tx, { item, row, userId, values, status, version, now }) {
    const columns = {
      status,
      scores: JSON.stringify(values.scores),
      comment: values.comment,
      version,
      updatedAt: now,
      submittedAt: status === "submitted" ? now : (row?.submittedAt ?? null),
    };
    if (!row)
      return tx
        .insert(mentatRatings)
        .values({
          questionId: item.q.id,
          raterId: userId,
          optionOrder: JSON.stringify(item.optionOrder),
          shownGender: item.gender,
          ...columns,
        })
        .returning({ id: mentatRatings.id })
        .get().id;
    return updateAtVersion(tx, mentatRatings, row.id, row.version, columns) ? row.id : null;
  },
  // The first save records what the expert was shown.
  auditContext: (item, row) =>
    row ? {} : { detail: { optionOrder: [null, item.optionOrder], shownGender: [null, item.gender] } },
};

/**
 * Saves an expert's ratings of one question: a draft (incomplete allowed, only before the first submission) or a
 * submission (all five scores 0–100), which may be revised later. `version` is the version the page read (0 before
 * the first save): a stale one is refused with 409. The option order and gender shown are recorded on first save.
 * Every change appends an audit event in the same IMMEDIATE transaction.
 */
export function saveOptionRating(
  db: Db,
  input: {
    userId: string;
    questionId: number;
    values: OptionRatingValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
  },
): RatingSaveResult {
  return saveWorkItem(db, optionRatingWork, { ...input, itemId: input.questionId });
}

// ---------------------------------------------------------------------------------------------------------------
// Admin: questions, variant sets, fits, export

export interface QuestionRow {
  id: number;
  externalId: string;
  position: number;
  domain: MentatDomain;
  preference: boolean;
  genders: Gender[];
  hasAge: boolean;
  hasRace: boolean;
  submitted: number;
}

export function listBankQuestions(db: Db, bankId: number): QuestionRow[] {
  const bank = getBank(db, bankId);
  if (!bank) return [];
  const questions = db
    .select()
    .from(mentatQuestions)
    .where(eq(mentatQuestions.bankId, bankId))
    .orderBy(asc(mentatQuestions.position))
    .all();
  const ratings = questions.length
    ? db
        .select({ questionId: mentatRatings.questionId })
        .from(mentatRatings)
        .where(
          and(
            inArray(
              mentatRatings.questionId,
              questions.map((q) => q.id),
            ),
            eq(mentatRatings.status, "submitted"),
          ),
        )
        .all()
    : [];
  return questions.map((q) => {
    const texts = JSON.parse(q.texts) as QuestionTexts;
    const base = texts.nonbinary ?? texts.neutral ?? texts.male ?? texts.female ?? "";
    return {
      id: q.id,
      externalId: q.externalId,
      position: q.position,
      domain: q.domain as MentatDomain,
      preference: bank.preferenceDomains.includes(q.domain as MentatDomain),
      genders: gendersOf(texts),
      hasAge: base.includes("<AGE>"),
      hasRace: base.includes("<NAT>"),
      submitted: ratings.filter((r) => r.questionId === q.id).length,
    };
  });
}

function loadQuestions(db: DbOrTx, bankId: number) {
  return db
    .select()
    .from(mentatQuestions)
    .where(eq(mentatQuestions.bankId, bankId))
    .orderBy(asc(mentatQuestions.position))
    .all()
    .map((q) => ({
      id: q.id,
      externalId: q.externalId,
      domain: q.domain as MentatDomain,
      texts: JSON.parse(q.texts) as QuestionTexts,
      options: JSON.parse(q.options) as string[],
      answer: q.intendedAnswer,
    }));
}

export interface DatasetSummary {
  id: number;
  dimension: VariantDimension;
  params: ExpansionParams;
  count: number;
  contentHash: string;
  createdAt: number;
}

export function listDatasets(db: Db, bankId: number): DatasetSummary[] {
  const order = ["base", "gender", "age", "race"];
  return db
    .select()
    .from(mentatDatasets)
    .where(eq(mentatDatasets.bankId, bankId))
    .all()
    .map((d) => ({
      id: d.id,
      dimension: d.dimension as VariantDimension,
      params: JSON.parse(d.params),
      count: d.count,
      contentHash: d.contentHash,
      createdAt: d.createdAt,
    }))
    .sort((a, b) => order.indexOf(a.dimension) - order.indexOf(b.dimension));
}

function variantsHash(variants: Variant[]): string {
  return createHash("sha256")
    .update(variants.map((v) => JSON.stringify([v.variantId, v.text])).join("\n"))
    .digest("hex");
}

/**
 * Expands a bank into one demographic variant set (core/mentat expandVariants) and stores it, replacing an earlier
 * set of the same dimension. The same questions and parameters always give the same set (same ids, order, hash).
 */
export function expandBank(
  db: Db,
  input: {
    bankId: number;
    dimension: VariantDimension;
    params?: ExpansionParams;
    actorId: string | null;
    now?: number;
  },
): DatasetSummary & { replaced: boolean; unchanged: boolean } {
  const params = {
    ages: [...(input.params?.ages ?? DEFAULT_AGES)],
    races: [...(input.params?.races ?? DEFAULT_RACES)],
  };
  const problem = checkExpansionParams(params);
  if (problem) throw new ServiceError(problem, "params");
  const now = input.now ?? Date.now();
  return writeTransaction(db, 
    (tx) => {
      const questions = loadQuestions(tx, input.bankId);
      if (questions.length === 0) throw new ServiceError("The bank has no questions to expand.", "bank");
      const variants = expandVariants(questions, input.dimension, params);
      const contentHash = variantsHash(variants);
      const old = tx
        .select()
        .from(mentatDatasets)
        .where(and(eq(mentatDatasets.bankId, input.bankId), eq(mentatDatasets.dimension, input.dimension)))
        .get();
      const storedParams = JSON.stringify(
        input.dimension === "age" ? { ages: params.ages } : input.dimension === "race" ? { races: params.races } : {},
      );
      if (old && old.contentHash === contentHash && old.params === storedParams)
        return {
          id: old.id,
          dimension: input.dimension,
          params: JSON.parse(old.params),
          count: old.count,
          contentHash,
          createdAt: old.createdAt,
          replaced: false,
          unchanged: true,
        };
      let id: number;
      if (old) {
        tx.delete(mentatVariants).where(eq(mentatVariants.datasetId, old.id)).run();
        tx.update(mentatDatasets)
          .set({ params: storedParams, contentHash, count: variants.length, createdAt: now, createdBy: input.actorId })
          .where(eq(mentatDatasets.id, old.id))
          .run();
        id = old.id;
      } else {
        id = tx
          .insert(mentatDatasets)
          .values({
            bankId: input.bankId,
            dimension: input.dimension,
            params: storedParams,
            contentHash,
            count: variants.length,
            createdAt: now,
            createdBy: input.actorId,
          })
          .returning({ id: mentatDatasets.id })
          .get().id;
      }
      const questionId = new Map(questions.map((q) => [q.externalId, q.id]));
      variants.forEach((v, position) =>
        tx
          .insert(mentatVariants)
          .values({
            datasetId: id,
            questionId: questionId.get(v.questionId)!,
            variantId: v.variantId,
            position,
            gender: v.gender,
            age: v.age,
            race: v.race,
            text: v.text,
          })
          .run(),
      );
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "mentat_dataset",
        entityId: id,
        action: old ? "replace" : "create",
        changes: {
          bankId: input.bankId,
          dimension: input.dimension,
          count: variants.length,
          contentHash: old ? [old.contentHash, contentHash] : contentHash,
        },
        at: now,
      });
      return {
        id,
        dimension: input.dimension,
        params: JSON.parse(storedParams),
        count: variants.length,
        contentHash,
        createdAt: now,
        replaced: Boolean(old),
        unchanged: false,
      };
    });
}

/** The submitted ratings of a bank's preference-domain questions, as annotation rows (question id, username, scores a–e). */
export function bankAnnotationRows(db: DbOrTx, bankId: number): AnnotationRow[] {
  const bank = db.select().from(mentatBanks).where(eq(mentatBanks.id, bankId)).get();
  if (!bank) return [];
  const domains = domainsOf(bank.preferenceDomains);
  return db
    .select({
      question: mentatQuestions.externalId,
      domain: mentatQuestions.domain,
      rater: users.username,
      scores: mentatRatings.scores,
    })
    .from(mentatRatings)
    .innerJoin(mentatQuestions, eq(mentatQuestions.id, mentatRatings.questionId))
    .innerJoin(users, eq(users.id, mentatRatings.raterId))
    .where(and(eq(mentatQuestions.bankId, bankId), eq(mentatRatings.status, "submitted")))
    .all()
    .filter((r) => domains.includes(r.domain as MentatDomain))
    .map((r) => ({ question: r.question, rater: r.rater, scores: JSON.parse(r.scores) as number[] }));
}

export interface FitOptions {
  raterEffects?: RaterEffects;
  penalty?: number;
  strengthPenalty?: number;
  bootstrap?: number;
  seed?: number;
}

export interface MentatFitResult {
  labels: PreferenceLabels;
  agreement: QuestionAgreement[];
  nRows: number;
}

export interface FitSummary {
  id: number;
  createdAt: number;
  params: Required<FitOptions>;
  inputHash: string;
  /** True when the submitted ratings differ from those the fit used. */
  stale: boolean;
  result: MentatFitResult;
}

export const FitOptionsSchema = z.object({
  raterEffects: z.enum(["none", "slope", "slope+offset"]).default(HBT_DEFAULTS.raterEffects),
  penalty: z.coerce.number().min(0).max(1000).default(HBT_DEFAULTS.penalty),
  strengthPenalty: z.coerce.number().min(0).max(1000).default(HBT_DEFAULTS.strengthPenalty),
  bootstrap: z.coerce.number().int().min(0).max(10_000).default(200),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(0),
});

/**
 * Fits preference labels to the bank's submitted ratings (core/bradley-terry fitPreferenceLabels) with Krippendorff's
 * α per question, and stores the fit. Runs synchronously: about 20–50 ms per refit for MENTAT-sized banks.
 */
export function runBankFit(
  db: Db,
  input: {
    bankId: number;
    options?: FitOptions;
    actorId: string | null;
    now?: number;
    onReplicate?: (done: number, total: number) => void;
  },
): FitSummary {
  const params = FitOptionsSchema.parse(input.options ?? {});
  const rows = bankAnnotationRows(db, input.bankId);
  if (rows.length === 0) throw new ServiceError("No submitted ratings yet: there is nothing to fit.", "fit", 409);
  const labels = fitPreferenceLabels(rows, OPTION_COUNT, { ...params, onReplicate: input.onReplicate });
  const result: MentatFitResult = { labels, agreement: optionAgreement(rows), nRows: rows.length };
  const inputHash = annotationRowsHash(rows);
  const now = input.now ?? Date.now();
  const id = writeTransaction(db, 
    (tx) => {
      const id = tx
        .insert(mentatFits)
        .values({
          bankId: input.bankId,
          params: JSON.stringify(params),
          inputHash,
          result: JSON.stringify(result),
          createdAt: now,
          createdBy: input.actorId,
        })
        .returning({ id: mentatFits.id })
        .get().id;
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "mentat_fit",
        entityId: id,
        action: "fit",
        changes: { bankId: input.bankId, rows: rows.length, inputHash, ...params },
        at: now,
      });
      return id;
    });
  return { id, createdAt: now, params, inputHash, stale: false, result };
}

export function getLatestFit(db: Db, bankId: number): FitSummary | null {
  const row = db.select().from(mentatFits).where(eq(mentatFits.bankId, bankId)).orderBy(desc(mentatFits.id)).get();
  if (!row) return null;
  return {
    id: row.id,
    createdAt: row.createdAt,
    params: JSON.parse(row.params),
    inputHash: row.inputHash,
    stale: annotationRowsHash(bankAnnotationRows(db, bankId)) !== row.inputHash,
    result: JSON.parse(row.result),
  };
}

export type ExportResult =
  | { ok: true; text: string; count: number; filename: string; warnings: string[] }
  | { ok: false; status: 404 | 409; message: string };

/**
 * The evaluation records of one variant set as JSONL (core/mentat evaluationRecord), in the set's order. Questions of
 * the preference domains carry the latest fit's labels and bounds; the others the intended answer. Refused when a
 * preference-domain question has no fitted label, unless `allowIntended` (then it keeps its intended answer and
 * the record says so in label_source).
 */
export function exportDataset(
  db: Db,
  input: { bankId: number; dimension: VariantDimension; allowIntended?: boolean },
): ExportResult {
  const bank = getBank(db, input.bankId);
  if (!bank) return { ok: false, status: 404, message: "No such bank." };
  const dataset = db
    .select()
    .from(mentatDatasets)
    .where(and(eq(mentatDatasets.bankId, bank.id), eq(mentatDatasets.dimension, input.dimension)))
    .get();
  if (!dataset)
    return {
      ok: false,
      status: 404,
      message: `The ${input.dimension} set has not been expanded yet. Expand it first.`,
    };
  const questions = new Map(loadQuestions(db, bank.id).map((q) => [q.id, q]));
  const fit = getLatestFit(db, bank.id);
  const fitted = new Map((fit?.result.labels.questions ?? []).map((q) => [q.question, q]));
  const warnings: string[] = [];
  if (fit?.stale) warnings.push("Ratings changed after the latest fit; run the fit again for current labels.");
  const labelsFor = new Map<number, QuestionLabels>();
  const unlabelled: string[] = [];
  for (const q of questions.values()) {
    const f = fitted.get(q.externalId);
    if (bank.preferenceDomains.includes(q.domain) && f)
      labelsFor.set(q.id, { source: "preference", labels: f.labels, lower: f.lower, upper: f.upper });
    else {
      if (bank.preferenceDomains.includes(q.domain)) unlabelled.push(q.externalId);
      labelsFor.set(q.id, intendedLabels(q.answer));
    }
  }
  if (unlabelled.length && !input.allowIntended)
    return {
      ok: false,
      status: 409,
      message: `${unlabelled.length} ${bank.preferenceDomains.join(
        "/",
      )} question(s) have no fitted preference label (${unlabelled.slice(0, 5).join(", ")}${
        unlabelled.length > 5 ? ", …" : ""
      }). Run the fit, or export with their intended answers.`,
    };
  if (unlabelled.length)
    warnings.push(`${unlabelled.length} preference-domain question(s) keep their intended answer (no fitted label).`);
  const variants = db
    .select()
    .from(mentatVariants)
    .where(eq(mentatVariants.datasetId, dataset.id))
    .orderBy(asc(mentatVariants.position))
    .all();
  const lines = variants.map((v) => {
    const q = questions.get(v.questionId)!;
    const variant: Variant = {
      variantId: v.variantId,
      questionId: q.externalId,
      dimension: input.dimension,
      gender: v.gender as Gender | null,
      age: v.age,
      race: v.race,
      text: v.text,
    };
    return JSON.stringify(evaluationRecord(variant, q, labelsFor.get(q.id)!, bank.seed));
  });
  const slug = bank.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  return {
    ok: true,
    text: lines.join("\n") + (lines.length ? "\n" : ""),
    count: lines.length,
    filename: `${slug}.${input.dimension}.jsonl`,
    warnings,
  };
}

