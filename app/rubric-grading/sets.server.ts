/**
 * Evaluation sets, subsets and the models of a set (docs/rubric-grading.md, "Evaluation sets" and "Models").
 */
import { and, asc, count, eq } from "drizzle-orm";
import {
  gradingConversations,
  gradingCriteria,
  gradingModels,
  gradingResponses,
  gradingSets,
  gradingSubsetMembers,
  gradingSubsets,
} from "../../db/schema";
import { visibleGradingVerdicts } from "../../db/schema-visible";
import type { Db } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import { parseEvalSet, parseIdList, recordHash, setHash, sha256, type LineError } from "./domain/eval-set";

export type GradingSet = typeof gradingSets.$inferSelect;
export type GradingModel = typeof gradingModels.$inferSelect;

export interface ImportResult {
  errors: LineError[];
  records: number;
  created: boolean;
  unchanged: boolean;
  contentSha256: string | null;
}

/**
 * Imports a HealthBench-format JSONL as a new set. Re-importing the same content under the same name changes
 * nothing; different content under an existing name is refused (its responses and verdicts belong to the old one).
 */
export function importEvalSet(
  db: Db,
  input: { name: string; text: string; dryRun?: boolean; now?: number },
): ImportResult {
  const parsed = parseEvalSet(input.text);
  if (parsed.errors.length)
    return { errors: parsed.errors, records: 0, created: false, unchanged: false, contentSha256: null };
  const hashes = parsed.records.map(recordHash);
  const contentSha256 = setHash(parsed.records.map((r, i) => ({ promptId: r.prompt_id, contentHash: hashes[i] })));
  const existing = db.select().from(gradingSets).where(eq(gradingSets.name, input.name)).get();
  if (existing) {
    if (existing.contentSha256 === contentSha256) {
      return { errors: [], records: parsed.records.length, created: false, unchanged: true, contentSha256 };
    }
    throw new ServiceError(`the set "${input.name}" exists with different content; import under a new name`);
  }
  if (input.dryRun)
    return { errors: [], records: parsed.records.length, created: false, unchanged: false, contentSha256 };
  const now = input.now ?? Date.now();
  db.transaction((tx) => {
    const set = tx
      .insert(gradingSets)
      .values({ name: input.name, sourceSha256: sha256(input.text), contentSha256, createdAt: now })
      .returning({ id: gradingSets.id })
      .get();
    parsed.records.forEach((r, position) => {
      const conv = tx
        .insert(gradingConversations)
        .values({
          setId: set.id,
          promptId: r.prompt_id,
          position,
          prompt: r.prompt.map((m) => ({ role: m.role, content: m.content })),
          exampleTags: r.example_tags,
          contentHash: hashes[position],
        })
        .returning({ id: gradingConversations.id })
        .get();
      r.rubrics.forEach((item, idx) =>
        tx
          .insert(gradingCriteria)
          .values({ conversationId: conv.id, idx, criterion: item.criterion, points: item.points, tags: item.tags })
          .run(),
      );
    });
  });
  return { errors: [], records: parsed.records.length, created: true, unchanged: false, contentSha256 };
}

export function requireGradingSet(db: Db, name: string): GradingSet {
  const set = db.select().from(gradingSets).where(eq(gradingSets.name, name)).get();
  if (!set) throw new ServiceError(`no evaluation set named "${name}"`, undefined, 404);
  return set;
}

export function getGradingSetById(db: Db, id: number): GradingSet | null {
  return db.select().from(gradingSets).where(eq(gradingSets.id, id)).get() ?? null;
}

export function listGradingSets(db: Db) {
  const sets = db.select().from(gradingSets).orderBy(asc(gradingSets.name)).all();
  return sets.map((s) => ({
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
  }));
}

/**
 * A named subset: the set's conversations whose ids are in the list (e.g. HealthBench-Hard's index gives
 * "Psych-Hard"). Ids not in the set are counted, not an error: the list is usually of a larger corpus.
 */
export function createSubset(db: Db, input: { set: GradingSet; name: string; idsText: string; now?: number }) {
  const { ids, errors } = parseIdList(input.idsText);
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
  const idsSha256 = sha256(input.idsText);
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

/** Recorded on a candidate whose API rejected the temperature (respond.server.ts switched it to the default). */
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
