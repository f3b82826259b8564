/**
 * MENTAT question banks (docs/mentat.md): the banks' summaries and the import of a question-bank CSV.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { createHash } from "node:crypto";
import { mentatBankRaters, mentatBanks, mentatQuestions, mentatRatings } from "../../db/schema";
import { visibleMentatBanks, visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import { textSource, type ImportSource } from "../formats/import-source";
import type { CsvIssue } from "../expert-panel/domain/expert-csv";
import { DEFAULT_PREFERENCE_DOMAINS, domainsOf, type MentatDomain } from "../expert-panel/domain/expert-scales";
import { questionBankItems, questionContentHash, type MentatQuestionInput } from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { diff, recordEvent } from "../audit/audit.server";
import { importItemFile, planCounts, type ItemPlan, type ItemStore } from "../expert-panel/item-import.server";
import { type HiddenParent } from "../platform/hidden-parents.server";
import { StudyNameSchema } from "../annotation/public.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { countSubmitted, panelStore, requireByName } from "../expert-panel/expert-panel.server";

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

export { domainsOf };

/** A bank's panel of experts (docs/mentat.md#expert-panels); its commands are in panel.server.ts. */
export const BANK_PANEL = panelStore("mentat_bank", {
  table: mentatBankRaters,
  group: mentatBankRaters.bankId,
  rater: mentatBankRaters.raterId,
  key: "bankId",
});

/** Where the ratings are kept, for the bank summaries' counts. */
const RATING_WORK = {
  table: visibleMentatRatings,
  item: visibleMentatRatings.questionId,
  status: visibleMentatRatings.status,
};

export function listBanks(db: Db): BankSummary[] {
  return db
    .select()
    .from(visibleMentatBanks)
    .orderBy(asc(visibleMentatBanks.name))
    .all()
    .map((b) => summariseBank(db, b));
}

function summariseBank(db: Db, b: typeof visibleMentatBanks.$inferSelect): BankSummary {
  const preferenceDomains = domainsOf(b.preferenceDomains);
  const questions = db
    .select({ id: visibleMentatQuestions.id, domain: visibleMentatQuestions.domain })
    .from(visibleMentatQuestions)
    .where(eq(visibleMentatQuestions.bankId, b.id))
    .all();
  const rated = questions.filter((q) => preferenceDomains.includes(q.domain as MentatDomain));
  return {
    id: b.id,
    name: b.name,
    description: b.description,
    preferenceDomains,
    seed: b.seed,
    numQuestions: questions.length,
    numRated: rated.length,
    numRaters: BANK_PANEL.memberIds(db, b.id).size,
    numSubmitted: countSubmitted(
      db,
      RATING_WORK,
      rated.map((q) => q.id),
    ),
    createdAt: b.createdAt,
  };
}

export const BANKS_WINDOW = {
  prefix: "b_",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the question banks (docs/architecture.md, "Pages are windows"): by name (its unique index) with a
 * name-prefix filter, parameters prefixed `b_`; only the window's banks are summarised.
 */
export function banksWindow(db: Db, params: URLSearchParams): ListWindow<BankSummary, "name", "q"> {
  const w = readWindow(params, BANKS_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q
    ? sql`${visibleMentatBanks.name} >= ${lo} and ${visibleMentatBanks.name} < ${hi}`
    : undefined;
  const k = keyset(w, [visibleMentatBanks.name, visibleMentatBanks.id]);
  const rows = db
    .select()
    .from(visibleMentatBanks)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((b) => summariseBank(db, b));
  const total = db.select({ n: count() }).from(visibleMentatBanks).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}

export function getBank(db: Db, id: number): BankSummary | null {
  const b = db.select().from(visibleMentatBanks).where(eq(visibleMentatBanks.id, id)).get();
  return b ? summariseBank(db, b) : null;
}

export function requireBankByName(db: Db, name: string): BankSummary {
  return requireByName(listBanks(db), name, { what: "question bank", plural: "Banks", field: "bank" });
}

// ---------------------------------------------------------------------------------------------------------------
// Import

export interface BankImportInput {
  bankName: string;
  /** The CSV: a text (a page's upload) or a file streamed through the import contract (app/cli/io.ts). */
  text: string | ImportSource;
  actorId: string | null;
  /** Applied when the bank is created, or changed when given for an existing bank. */
  preferenceDomains?: MentatDomain[];
  seed?: number;
  dryRun?: boolean;
  now?: number;
  /** For tests: the chunks' lock budget, and a call after each committed chunk (a new bank). */
  chunkBudgetMs?: number;
  onChunk?: (done: number) => void;
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

type QuestionRecord = typeof mentatQuestions.$inferSelect;

function questionStore(bankId: number, now: number): ItemStore<MentatQuestionInput, QuestionRecord> {
  const values = (p: ItemPlan<MentatQuestionInput, QuestionRecord>) => ({
    domain: p.item.domain,
    texts: p.item.texts,
    options: p.item.options,
    intendedAnswer: p.item.answer,
    notes: p.item.notes,
    contentHash: p.hash,
    position: p.position,
  });
  return {
    entity: "mentat_question",
    setPosition: (tx, id, position) =>
      tx.update(mentatQuestions).set({ position }).where(eq(mentatQuestions.id, id)).run(),
    create: (tx, p, importRun) =>
      tx
        .insert(mentatQuestions)
        .values({ bankId, externalId: p.item.externalId, ...values(p), createdAt: now, updatedAt: now, importRun })
        .returning({ id: mentatQuestions.id })
        .get().id,
    update: (tx, p, old) =>
      tx
        .update(mentatQuestions)
        .set({ ...values(p), updatedAt: now })
        .where(eq(mentatQuestions.id, old.id))
        .run(),
    createdChanges: (p) => ({ externalId: p.item.externalId, domain: p.item.domain, contentHash: p.hash }),
    audited: (p, old) => [
      { domain: old.domain, contentHash: old.contentHash, position: old.position },
      { domain: p.item.domain, contentHash: p.hash, position: p.position },
    ],
  };
}

/**
 * Imports a question-bank CSV into a bank (created if needed). The whole file is validated first and nothing is
 * written on any error. Questions are matched by id: new ones are added, changed ones updated, unchanged ones kept;
 * a question that already has ratings cannot change its text, options or answer (the ratings would no longer fit).
 * Questions missing from the file are kept. Positions follow the file.
 */
/** A bank an import is still writing is hidden from every reader (docs/reliability.md, "Bulk imports"). */
const findBank = (db: DbOrTx, name: string) =>
  db.select().from(visibleMentatBanks).where(eq(visibleMentatBanks.name, name)).get();

type BankRecord = typeof mentatBanks.$inferSelect;

/** A bank's questions, without those an import is still adding (docs/reliability.md, "Bulk imports"). */
const bankQuestions = (db: DbOrTx, bankId: number) =>
  db.select().from(visibleMentatQuestions).where(eq(visibleMentatQuestions.bankId, bankId)).all();

/** An existing bank's preference domains and seed, when the import gives them, audited. */
function changeBankSettings(
  tx: DbOrTx,
  bank: BankRecord,
  input: Pick<BankImportInput, "preferenceDomains" | "seed" | "actorId">,
  now: number,
) {
  const changes: Record<string, unknown> = {};
  if (input.preferenceDomains) changes.preferenceDomains = input.preferenceDomains;
  if (input.seed !== undefined) changes.seed = input.seed;
  const d = diff({ preferenceDomains: bank.preferenceDomains, seed: bank.seed }, changes);
  if (!Object.keys(d).length) return;
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

function recordBankCreated(
  tx: DbOrTx,
  bankId: number,
  name: string,
  settings: { preferenceDomains: string[]; seed: number },
  actorId: string | null,
  now: number,
) {
  recordEvent(tx, {
    actorId,
    entity: "mentat_bank",
    entityId: bankId,
    action: "create",
    changes: { name, ...settings },
    at: now,
  });
}

/** A new bank hidden by its import, and what the import writes under it (removed when the import fails or dies). */
export const MENTAT_BANK_PARENT: HiddenParent = {
  table: "mentat_banks",
  children: ["delete from mentat_questions where id in (select id from mentat_questions where bank_id = ? limit 2000)"],
};

export function importQuestionBank(db: Db, input: BankImportInput): BankImportResult {
  const name = BankNameSchema.safeParse(input.bankName);
  if (!name.success) return { ok: false, errors: [{ line: 0, message: name.error.issues[0]!.message }], warnings: [] };
  if (input.seed !== undefined && !(Number.isInteger(input.seed) && input.seed >= 0 && input.seed < 2 ** 31))
    return {
      ok: false,
      errors: [{ line: 0, message: "the seed must be a whole number from 0 to 2147483647." }],
      warnings: [],
    };
  const now = input.now ?? Date.now();
  const notesHash = (hash: string, notes: string) =>
    createHash("sha256")
      .update(JSON.stringify([hash, notes]))
      .digest("hex");
  const rules = (tx: DbOrTx) => ({
    hash: questionContentHash,
    // A question whose notes change is changed too, though its content hash is the same.
    passHash: (q: MentatQuestionInput) => notesHash(questionContentHash(q), q.notes),
    storedPassHash: (old: QuestionRecord) => notesHash(old.contentHash, old.notes),
    hasWork: (id: number) =>
      Boolean(
        tx
          .select({ id: mentatRatings.id })
          // eslint-disable-next-line concord/visible-rows -- a rating an import is still writing is work too
          .from(mentatRatings)
          .where(eq(mentatRatings.questionId, id))
          .get(),
      ),
    locked: (externalId: string) =>
      `question "${externalId}" already has ratings: its text, domain, options and answer cannot change. Give the changed question a new id.`,
  });

  const settings = {
    preferenceDomains: input.preferenceDomains ?? [...DEFAULT_PREFERENCE_DOMAINS],
    seed: input.seed ?? 1,
  };
  const text = input.text;
  // Read in two passes, checked whole and then written; outside a dry run and a caller's transaction (the demo
  // seed) in the import run's short transactions, a new bank behind the hidden bank and new questions of an
  // existing one hidden by the run's id (docs/reliability.md, "Bulk imports"; app/expert-panel/item-import.server.ts).
  return importItemFile<MentatQuestionInput, QuestionRecord, BankRecord, BankImportResult>(db, MENTAT_BANK_PARENT, {
    name: name.data,
    what: "question bank",
    find: (tx) => findBank(tx, name.data),
    insert: (tx, runId) =>
      tx
        .insert(mentatBanks)
        .values({ name: name.data, ...settings, createdAt: now, importRun: runId })
        .returning({ id: mentatBanks.id })
        .get(),
    existing: bankQuestions,
    store: (bankId) => questionStore(bankId, now),
    file: {
      source: typeof text === "string" ? textSource(text) : text,
      read: (report) => questionBankItems(text, report),
    },
    rules,
    opened: (tx, bankId, bank) => {
      if (bank) changeBankSettings(tx, bank, input, now);
      else recordBankCreated(tx, bankId, name.data, settings, input.actorId, now);
    },
    result: (bankId, plan, bank, written, warnings) => ({
      ok: true,
      bankId,
      bankName: name.data,
      createdBank: !bank,
      ...planCounts(plan, warnings),
      written,
    }),
    now,
    input,
  });
}
