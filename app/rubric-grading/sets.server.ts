/**
 * Evaluation sets, subsets and the models of a set (docs/rubric-grading.md, "Evaluation sets" and "Models").
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import {
  gradingConversations,
  gradingModels,
  gradingResponses,
  gradingSets,
  gradingSubsetMembers,
  gradingSubsets,
} from "../../db/schema";
import { visibleGradingSets, visibleGradingVerdicts } from "../../db/schema-visible";
import type { Db } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { importBehindHiddenParent, INTERRUPTED, nameFree, type HiddenParent } from "../platform/hidden-parents.server";
import {
  checkEvalSet,
  evalSetRecords,
  parseIdList,
  recordHash,
  setHash,
  sha256,
  type EvalRecord,
  type LineError,
} from "./domain/eval-set";
import {
  FILE_CHANGED_MESSAGE,
  FileChangedError,
  secondPass,
  textSource,
  type ImportSource,
} from "../formats/import-source";

export type GradingSet = typeof gradingSets.$inferSelect;
export type GradingModel = typeof gradingModels.$inferSelect;

export interface ImportResult {
  errors: LineError[];
  warnings: LineError[];
  records: number;
  created: boolean;
  unchanged: boolean;
  contentSha256: string | null;
}

/**
 * A new set hidden by its import (its `import_run` set: every reader below skips it), and what the import writes under
 * it, removed when the import fails or dies (docs/reliability.md, "Bulk imports").
 */
export const GRADING_SET_PARENT: HiddenParent = {
  table: "grading_sets",
  children: [
    `delete from grading_criteria where rowid in (select c.rowid from grading_criteria c join grading_conversations v
       on v.id = c.conversation_id where v.set_id = ? limit 2000)`,
    "delete from grading_conversations where id in (select id from grading_conversations where set_id = ? limit 2000)",
  ],
};

/**
 * Imports a HealthBench-format JSONL as a new set. Re-importing the same content under the same name changes
 * nothing; different content under an existing name is refused (its responses and verdicts belong to the old one).
 *
 * The whole file is parsed and checked first (docs/reliability.md, "The import contract"); then the set is created
 * hidden and its conversations written in the import run's short transactions, and the last transaction makes the
 * set visible at once. No transaction holds the write lock longer than the run's chunk (25 ms), whatever the size
 * of the set.
 */
export function importEvalSet(
  db: Db,
  input: { name: string; dryRun?: boolean; now?: number } & ({ text: string } | { source: ImportSource }),
  /** For tests and measurements: the chunks' lock budget, and a call after each committed chunk. */
  opts: { chunkBudgetMs?: number; onChunk?: (done: number) => void } = {},
): ImportResult {
  // The file in two passes over one streaming reader (docs/reliability.md, "Bulk imports"): checked whole first,
  // holding only each record's id and hash; then read again and written record by record. Never the file at once.
  const source = "source" in input ? input.source : textSource(input.text);
  const checked = checkEvalSet(source.jsonlLines());
  const warnings = checked.warnings;
  if (checked.errors.length)
    return { errors: checked.errors, warnings, records: 0, created: false, unchanged: false, contentSha256: null };
  const checkedSha256 = "source" in input ? input.source.sha256() : sha256(input.text);
  const contentSha256 = setHash(checked.members);
  const result = (created: boolean, unchanged: boolean): ImportResult => ({
    errors: [],
    warnings,
    records: checked.records,
    created,
    unchanged,
    contentSha256,
  });
  const sameOrRefuse = (existing: GradingSet) => {
    if (existing.contentSha256 === contentSha256) return result(false, true);
    throw new ServiceError(`the set "${input.name}" exists with different content; import under a new name`);
  };
  const existing = db.select().from(visibleGradingSets).where(eq(visibleGradingSets.name, input.name)).get();
  if (existing) return sameOrRefuse(existing);
  if (input.dryRun) return result(false, false);
  const now = input.now ?? Date.now();
  const $ = db.$client;
  const insertConversation = $.prepare(
    `insert into grading_conversations (set_id, prompt_id, position, prompt, example_tags, content_hash)
     values (?, ?, ?, ?, ?, ?)`,
  );
  const insertCriterion = $.prepare(
    "insert into grading_criteria (conversation_id, idx, criterion, points, tags) values (?, ?, ?, ?, ?)",
  );
  const outcome = importBehindHiddenParent(db, GRADING_SET_PARENT, {
    target: `grading-set:${input.name}`,
    create: (tx, runId) => {
      if (!nameFree(tx, GRADING_SET_PARENT, input.name, "evaluation set")) return null;
      return tx
        .insert(gradingSets)
        .values({
          name: input.name,
          sourceSha256: checkedSha256 ?? contentSha256,
          contentSha256,
          createdAt: now,
          importRun: runId,
        })
        .returning({ id: gradingSets.id })
        .get();
    },
    rows: () => recordBatches(source, checked.members, checkedSha256),
    write: (_tx, { record: r, position, contentHash }, set) => {
      // The same JSON text drizzle's JSON columns write (docs/architecture.md, "JSON columns").
      const conversation = insertConversation.run(
        set.id,
        r.prompt_id,
        position,
        JSON.stringify(r.prompt.map((m) => ({ role: m.role, content: m.content }))),
        JSON.stringify(r.example_tags),
        contentHash,
      ).lastInsertRowid;
      r.rubrics.forEach((item, idx) =>
        insertCriterion.run(conversation, idx, item.criterion, item.points, JSON.stringify(item.tags)),
      );
    },
    // The second pass (secondPass) refused a file whose bytes changed since the first: nothing more to check here.
    finish: () => null,
    chunkBudgetMs: opts.chunkBudgetMs,
    onChunk: opts.onChunk,
  });
  if ("refused" in outcome) throw new ServiceError(outcome.refused, undefined, 409);
  if ("exists" in outcome) {
    // Created by another import meanwhile: the same content is already there, other content is refused.
    const now = db.select().from(visibleGradingSets).where(eq(visibleGradingSets.name, input.name)).get();
    if (now) return sameOrRefuse(now);
    throw new ServiceError(INTERRUPTED, undefined, 409);
  }
  return result(true, false);
}

const FILE_CHANGED = FILE_CHANGED_MESSAGE;

type ConversationRow = { record: EvalRecord; position: number; contentHash: string };

/**
 * The second pass over an evaluation set: its records read again through `secondPass` (app/formats/import-source.ts),
 * in batches of at most 500, each written in the import run's short transactions before the next is read, checked
 * against the first pass's ids and hashes.
 */
function* recordBatches(
  source: ImportSource,
  members: readonly { promptId: string; contentHash: string }[],
  firstSha256: string | null,
): Generator<ConversationRow[]> {
  let position = 0;
  function* rows(): Generator<ConversationRow> {
    for (const record of evalSetRecords(source.jsonlLines()))
      yield { record, position: position++, contentHash: recordHash(record) };
  }
  try {
    yield* secondPass({
      source,
      records: rows,
      keyOf: (r) => ({ key: r.record.prompt_id, hash: r.contentHash }),
      first: members.map((m) => ({ key: m.promptId, hash: m.contentHash })),
      firstSha256,
    });
  } catch (error) {
    if (error instanceof FileChangedError) throw new ServiceError(FILE_CHANGED, undefined, 409);
    throw error;
  }
}

export function requireGradingSet(db: Db, name: string): GradingSet {
  const set = db.select().from(visibleGradingSets).where(eq(visibleGradingSets.name, name)).get();
  if (!set) throw new ServiceError(`no evaluation set named "${name}"`, undefined, 404);
  return set;
}

export function getGradingSetById(db: Db, id: number): GradingSet | null {
  return db.select().from(visibleGradingSets).where(eq(visibleGradingSets.id, id)).get() ?? null;
}

export function listGradingSets(db: Db) {
  const sets = db.select().from(visibleGradingSets).orderBy(asc(visibleGradingSets.name)).all();
  return sets.map((s) => withCounts(db, s));
}

function withCounts(db: Db, s: typeof visibleGradingSets.$inferSelect) {
  return {
    ...s,
    conversations: db
      .select({ n: count() })
      .from(gradingConversations)
      .where(eq(gradingConversations.setId, s.id))
      .get()!.n,
    subsets: db
      .select()
      .from(gradingSubsets)
      .where(eq(gradingSubsets.setId, s.id))
      .orderBy(asc(gradingSubsets.name))
      .all(),
  };
}

export const GRADING_SETS_WINDOW = {
  prefix: "",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/** One row of the admin list of evaluation sets. */
export interface GradingSetRow {
  id: number;
  name: string;
  conversations: number;
  subsets: string[];
}

/**
 * A window of the evaluation sets (docs/architecture.md, "Pages are windows"): by name (its unique index) with a
 * name-prefix filter; only the window's sets are counted.
 */
export function gradingSetsWindow(db: Db, params: URLSearchParams): ListWindow<GradingSetRow, "name", "q"> {
  const w = readWindow(params, GRADING_SETS_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q
    ? sql`${visibleGradingSets.name} >= ${lo} and ${visibleGradingSets.name} < ${hi}`
    : undefined;
  const k = keyset(w, [visibleGradingSets.name, visibleGradingSets.id]);
  const rows = db
    .select()
    .from(visibleGradingSets)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((s) => {
      const c = withCounts(db, s);
      return { id: c.id, name: c.name, conversations: c.conversations, subsets: c.subsets.map((x) => x.name) };
    });
  const total = db.select({ n: count() }).from(visibleGradingSets).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}

/**
 * A named subset: the set's conversations whose ids are in the list (e.g. HealthBench-Hard's index gives
 * "Psych-Hard"). Ids not in the set are counted, not an error: the list is usually of a larger corpus.
 */
export function createSubset(
  db: Db,
  input: { set: GradingSet; name: string; ids: string | ImportSource; now?: number },
) {
  const source = typeof input.ids === "string" ? textSource(input.ids) : input.ids;
  const { ids, errors } = parseIdList(source.jsonlLines());
  if (errors.length) return { errors, members: 0, unknownIds: 0, contentSha256: null };
  const rows = db
    .select({
      id: gradingConversations.id,
      promptId: gradingConversations.promptId,
      contentHash: gradingConversations.contentHash,
    })
    .from(gradingConversations)
    .where(eq(gradingConversations.setId, input.set.id))
    .all();
  const wanted = new Set(ids);
  const members = rows.filter((r) => wanted.has(r.promptId));
  if (members.length === 0) throw new ServiceError(`no conversation of "${input.set.name}" is in the id list`);
  const contentSha256 = setHash(members);
  const idsSha256 = source.sha256() ?? "";
  const existing = db
    .select()
    .from(gradingSubsets)
    .where(and(eq(gradingSubsets.setId, input.set.id), eq(gradingSubsets.name, input.name)))
    .get();
  if (existing && existing.contentSha256 !== contentSha256) {
    throw new ServiceError(`the subset "${input.name}" exists with other members; use a new name`);
  }
  if (!existing) {
    db.transaction((tx) => {
      const subset = tx
        .insert(gradingSubsets)
        .values({ setId: input.set.id, name: input.name, idsSha256, contentSha256, createdAt: input.now ?? Date.now() })
        .returning({ id: gradingSubsets.id })
        .get();
      for (const m of members)
        tx.insert(gradingSubsetMembers).values({ subsetId: subset.id, conversationId: m.id }).run();
    });
  }
  return { errors: [], members: members.length, unknownIds: ids.length - members.length, contentSha256 };
}

export function requireSubset(db: Db, set: GradingSet, name: string) {
  const subset = db
    .select()
    .from(gradingSubsets)
    .where(and(eq(gradingSubsets.setId, set.id), eq(gradingSubsets.name, name)))
    .get();
  if (!subset) throw new ServiceError(`"${set.name}" has no subset named "${name}"`, undefined, 404);
  return subset;
}

export interface ModelInput {
  set: GradingSet;
  role: "candidate" | "judge";
  name: string;
  model: string;
  baseUrl: string;
  temperature: number | null;
  maxTokens: number;
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  selfCandidate?: string | null;
  note?: string;
}

/** Recorded on a candidate or judge whose API rejected the temperature (respond.server.ts, grade.server.ts). */
export const TEMPERATURE_NOTE = "the API rejected the temperature parameter; the provider's default was used";

const sameParams = (m: GradingModel, i: ModelInput) =>
  m.model === i.model &&
  m.temperature === i.temperature &&
  m.maxTokens === i.maxTokens &&
  m.maxTokensParam === i.maxTokensParam;

/**
 * Registers a candidate or judge of the set, or returns the registered one. Its decoding parameters are fixed once
 * it has stored work: mixing temperatures in one column of Table 1 would misreport it. The endpoint URL may change
 * (the same model served elsewhere).
 */
export function ensureModel(db: Db, input: ModelInput): GradingModel {
  const existing = db
    .select()
    .from(gradingModels)
    .where(
      and(
        eq(gradingModels.setId, input.set.id),
        eq(gradingModels.role, input.role),
        eq(gradingModels.name, input.name),
      ),
    )
    .get();
  if (existing) {
    // A rerun asks for temperature 0 again; the recorded switch to the default stands.
    if (existing.temperature === null && existing.note === TEMPERATURE_NOTE)
      input = { ...input, temperature: null, note: TEMPERATURE_NOTE };
    if (!sameParams(existing, input)) {
      const work =
        input.role === "candidate"
          ? db.select({ n: count() }).from(gradingResponses).where(eq(gradingResponses.candidateId, existing.id)).get()!
              .n
          : db
              .select({ n: count() })
              .from(visibleGradingVerdicts)
              .where(eq(visibleGradingVerdicts.judgeId, existing.id))
              .get()!.n;
      if (work > 0) {
        throw new ServiceError(
          `the ${input.role} "${input.name}" already has stored work with model ${existing.model}, temperature ${
            existing.temperature ?? "default"
          }, max tokens ${existing.maxTokens}; register the new parameters under another name`,
        );
      }
    }
    const updated = db
      .update(gradingModels)
      .set({
        model: input.model,
        baseUrl: input.baseUrl,
        temperature: input.temperature,
        maxTokens: input.maxTokens,
        maxTokensParam: input.maxTokensParam,
        selfCandidate: input.selfCandidate ?? existing.selfCandidate,
        note: input.note ?? existing.note,
      })
      .where(eq(gradingModels.id, existing.id))
      .returning()
      .get();
    return updated;
  }
  return db
    .insert(gradingModels)
    .values({
      setId: input.set.id,
      role: input.role,
      name: input.name,
      model: input.model,
      baseUrl: input.baseUrl,
      temperature: input.temperature,
      maxTokens: input.maxTokens,
      maxTokensParam: input.maxTokensParam,
      selfCandidate: input.selfCandidate ?? null,
      note: input.note ?? "",
      createdAt: Date.now(),
    })
    .returning()
    .get();
}

export function listModels(db: Db, setId: number, role?: "candidate" | "judge"): GradingModel[] {
  return db
    .select()
    .from(gradingModels)
    .where(role ? and(eq(gradingModels.setId, setId), eq(gradingModels.role, role)) : eq(gradingModels.setId, setId))
    .orderBy(asc(gradingModels.role), asc(gradingModels.name))
    .all();
}

export function requireModel(db: Db, set: GradingSet, role: "candidate" | "judge", name: string): GradingModel {
  const m = db
    .select()
    .from(gradingModels)
    .where(and(eq(gradingModels.setId, set.id), eq(gradingModels.role, role), eq(gradingModels.name, name)))
    .get();
  if (!m) throw new ServiceError(`"${set.name}" has no ${role} named "${name}"`, undefined, 404);
  return m;
}
