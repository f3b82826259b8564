/**
 * Imports MENTAT's own annotation files (core/mentat-annotations.ts; docs/mentat.md, "Importing MENTAT's
 * annotation files") as submitted option ratings of a bank, so that `mentat-fit` refits MENTAT's data. Every file is
 * checked first, then the questions, raters and existing ratings; nothing is written on any problem. The new
 * ratings are written in an import run's short transactions, hidden until its last one, which checks everything
 * again and writes the rest (`writeRatings`).
 */
import { and, count, eq } from "drizzle-orm";
import { z } from "zod";
import { mentatRatings } from "../../db/schema";
import { visibleMentatBanks, visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import { parseMentatAnnotationCsv, type MentatAnnotationRow } from "./domain/mentat-annotations";
import type { Db, Tx } from "../platform/db.server";
import { beginImportRun } from "../platform/import-runs.server";
import { ServiceError } from "../platform/service-error";
import { recordEvent } from "../audit/audit.server";
import { addBankRaters } from "./panel.server";
import { requireBankByName } from "./banks.server";
import { listUsers } from "../accounts/users.server";
import { pushAll } from "../stats/extremes";
import type { ImportSource } from "../formats/import-source";

export interface AnnotationFileInput {
  /** The name used in messages (`FILE:LINE: reason`). */
  name: string;
  /** The file's text, or the command line's stream of it (`importFileSource`: never held whole). */
  text: string | ImportSource;
}

export interface FileIssue {
  file: string;
  line: number;
  message: string;
}

export const MentatAnnotationImportSchema = z.object({
  bankName: z.string().trim().min(1, "give the bank's name"),
  /** The bank question id of MENTAT's question number: `{q_no}` is replaced; default the number itself. */
  idTemplate: z
    .string()
    .default("{q_no}")
    .refine((t) => t.includes("{q_no}"), "the id template must contain {q_no}"),
  /** MENTAT rater id → Concord username; unmapped raters are the user of the same (lower-case) name. */
  raters: z.record(z.string(), z.string()).default({}),
  /** A second rating of the same question by the same rater: refuse (default), or keep the last one read. */
  duplicates: z.enum(["refuse", "last"]).default("refuse"),
  /** Overwrite submitted ratings that differ (by default they are refused). */
  replace: z.boolean().default(false),
  dryRun: z.boolean().default(false),
});
export type MentatAnnotationImportOptions = z.input<typeof MentatAnnotationImportSchema>;

export type MentatAnnotationImportResult =
  | { ok: false; errors: FileIssue[]; warnings: FileIssue[] }
  | {
      ok: true;
      written: boolean;
      bankName: string;
      files: number;
      ratings: number;
      created: number;
      replaced: number;
      unchanged: number;
      duplicatesDropped: number;
      raters: { mentat: string; username: string; ratings: number }[];
      outsidePreferenceDomains: number;
      warnings: FileIssue[];
    };

interface Planned extends MentatAnnotationRow {
  file: string;
  mentatRater: string;
}

/**
 * A bank's questions by their external id (MENTAT's `q_no` through the id template), with what the ratings imports
 * need of them; shared by the experts' ratings import and the MENTAT release import (mentat-release.server.ts).
 */
export function bankQuestionsByExternalId(db: Db, bankId: number) {
  return new Map(
    db
      .select({
        id: visibleMentatQuestions.id,
        externalId: visibleMentatQuestions.externalId,
        domain: visibleMentatQuestions.domain,
        intended: visibleMentatQuestions.intendedAnswer,
      })
      .from(visibleMentatQuestions)
      .where(eq(visibleMentatQuestions.bankId, bankId))
      .all()
      .map((q) => [q.externalId, q]),
  );
}

export function importMentatAnnotations(
  db: Db,
  input: {
    files: AnnotationFileInput[];
    options: MentatAnnotationImportOptions;
    actorId: string | null;
    now?: number;
    /** The run's chunks (tests): their lock budget, and what to do after each one. */
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): MentatAnnotationImportResult {
  const chunks = { chunkBudgetMs: input.chunkBudgetMs, onChunk: input.onChunk };
  const options = MentatAnnotationImportSchema.parse(input.options);
  const errors: FileIssue[] = [];
  const warnings: FileIssue[] = [];
  const planned: Planned[] = [];
  for (const f of input.files) {
    const parsed = parseMentatAnnotationCsv(f.text);
    if (!parsed.ok) {
      pushAll(
        errors,
        parsed.errors.map((e) => ({ file: f.name, ...e })),
      );
      continue;
    }
    pushAll(
      warnings,
      parsed.warnings.map((w) => ({ file: f.name, ...w })),
    );
    for (const row of parsed.file.rows) planned.push({ ...row, file: f.name, mentatRater: parsed.file.rater });
  }
  if (errors.length) return { ok: false, errors, warnings };

  const bank = requireBankByName(db, options.bankName);
  const questions = bankQuestionsByExternalId(db, bank.id);
  const raterUsers = new Map(
    listUsers(db)
      .filter((u) => u.roles.includes("rater") && u.active)
      .map((u) => [u.username, u]),
  );
  const usernameOf = (mentat: string) => (options.raters[mentat] ?? mentat).toLowerCase();
  const missingRaters = new Set<string>();
  for (const row of planned) {
    const id = options.idTemplate.replace("{q_no}", row.qNo);
    if (!questions.has(id))
      errors.push({
        file: row.file,
        line: row.line,
        message: `bank "${bank.name}" has no question "${id}" (q_no ${row.qNo}).`,
      });
    if (!raterUsers.has(usernameOf(row.mentatRater))) missingRaters.add(row.mentatRater);
  }
  for (const m of missingRaters) {
    const first = planned.find((r) => r.mentatRater === m)!;
    errors.push({
      file: first.file,
      line: first.line,
      message: `rater "${m}" is not an active user with the rater role named "${usernameOf(m)}": create one (users create --username ${usernameOf(m)} --role rater) or map it with --rater ${m}=USERNAME.`,
    });
  }
  if (errors.length) return { ok: false, errors, warnings };

  // One rating per expert and question, as in Concord's workspace (docs/mentat.md lists this difference).
  const byKey = new Map<string, Planned>();
  let duplicatesDropped = 0;
  for (const row of planned) {
    const key = `${options.idTemplate.replace("{q_no}", row.qNo)}\u0000${usernameOf(row.mentatRater)}`;
    const earlier = byKey.get(key);
    if (earlier) {
      if (options.duplicates === "refuse") {
        errors.push({
          file: row.file,
          line: row.line,
          message: `rater "${row.mentatRater}" already rated q_no ${row.qNo} at ${earlier.file}:${earlier.line}; Concord keeps one rating per expert and question (--duplicates last keeps the last one).`,
        });
        continue;
      }
      duplicatesDropped++;
    }
    byKey.set(key, row);
  }
  if (errors.length) return { ok: false, errors, warnings };

  const now = input.now ?? Date.now();
  const rows = [...byKey.values()];
  const preference = new Set<string>(bank.preferenceDomains);
  let created = 0;
  let replaced = 0;
  let unchanged = 0;
  let outsidePreferenceDomains = 0;
  const plan = rows.map((row) => {
    const question = questions.get(options.idTemplate.replace("{q_no}", row.qNo))!;
    const user = raterUsers.get(usernameOf(row.mentatRater))!;
    if (!preference.has(question.domain)) outsidePreferenceDomains++;
    const existing = db
      .select()
      .from(visibleMentatRatings)
      .where(and(eq(visibleMentatRatings.questionId, question.id), eq(visibleMentatRatings.raterId, user.id)))
      .get();
    const same =
      existing?.status === "submitted" &&
      JSON.stringify(existing.scores) === JSON.stringify(row.scores) &&
      existing.comment === row.comment;
    if (same) unchanged++;
    else if (existing) {
      if (existing.status === "submitted" && !options.replace)
        errors.push({
          file: row.file,
          line: row.line,
          message: `"${user.username}" already submitted different ratings of question "${question.externalId}" (--replace overwrites them).`,
        });
      replaced++;
    } else created++;
    return { row, question, user, existing, same };
  });
  if (errors.length) return { ok: false, errors, warnings };

  const raterCounts = new Map<string, { mentat: string; username: string; ratings: number }>();
  for (const { row, user } of plan) {
    const entry = raterCounts.get(user.username) ?? { mentat: row.mentatRater, username: user.username, ratings: 0 };
    entry.ratings++;
    raterCounts.set(user.username, entry);
  }
  const summary = {
    bankName: bank.name,
    files: input.files.length,
    ratings: rows.length,
    created,
    replaced,
    unchanged,
    duplicatesDropped,
    raters: [...raterCounts.values()].sort((a, b) => (a.username < b.username ? -1 : 1)),
    outsidePreferenceDomains,
    warnings,
  };
  if (options.dryRun) return { ok: true, written: false, ...summary };

  writeRatings(db, { bankId: bank.id, plan, actorId: input.actorId, now, ...chunks });
  return { ok: true, written: true, ...summary };
}

type PlannedRating = {
  row: Planned;
  question: { id: number; externalId: string };
  user: { id: string; username: string };
  existing: typeof mentatRatings.$inferSelect | undefined;
  same: boolean;
};

/**
 * Writes a checked plan (docs/reliability.md, "Imports that add rows to an existing parent"): the new ratings, with
 * their "import" events, in the import run's short transactions, each row carrying the run's id so that every reader
 * hides it until the end. The last transaction checks the guard again — the bank is still there, every existing
 * rating the plan compared with is unchanged, every new one is still the run's (an expert's own first save of the
 * question removes it) and the raters may still join the panel — then replaces the changed ratings, adds the raters to
 * the panel and deletes the run's row: the whole import becomes visible at once. A refusal there, or a failure,
 * removes what was written; a killed import's rows are removed by the next import or start.
 */
function writeRatings(
  db: Db,
  input: {
    bankId: number;
    plan: PlannedRating[];
    actorId: string | null;
    now: number;
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): void {
  const { bankId, actorId, now } = input;
  const versionsOf = db.$client.prepare(
    "select id, version from visible_mentat_ratings where id in (select value from json_each(?))",
  );
  const rewrite = db.$client.prepare(
    "update mentat_ratings set status = 'submitted', scores = ?, option_order = ?, shown_gender = ?, comment = ?, " +
      "updated_at = ?, submitted_at = ?, version = ? where id = ?",
  );
  const values = (row: Planned) => ({
    status: "submitted" as const,
    scores: row.scores,
    optionOrder: row.optionOrder,
    shownGender: row.gender,
    comment: row.comment,
    updatedAt: now,
    submittedAt: now,
  });
  const event = (tx: Tx, id: number, p: PlannedRating, importRun: string | null) =>
    recordEvent(tx, {
      actorId,
      entity: "mentat_rating",
      entityId: id,
      action: "import",
      changes: {
        source: `${p.row.file}:${p.row.line}`,
        scores: [p.existing ? p.existing.scores : null, p.row.scores],
        optionOrder: [p.existing ? p.existing.optionOrder : null, p.row.optionOrder],
      },
      at: now,
      importRun,
    });
  const fresh = input.plan.filter((p) => !p.existing);
  const replaced = input.plan.filter((p) => p.existing && !p.same);
  const compared = input.plan.flatMap((p) => (p.existing ? [p.existing] : []));
  const { run } = beginImportRun(db, `mentat-ratings:${bankId}`, () => null, { chunkBudgetMs: input.chunkBudgetMs });
  try {
    // New ratings, and the events of the ratings it replaces (hidden with the run until its last transaction, and
    // removed with it), in short transactions: the last one then only checks versions and rewrites rows.
    run.writeInChunks(
      [...fresh, ...replaced],
      (tx, p) => {
        if (p.existing) return void event(tx, p.existing.id, p, run.id);
        // A rating an expert saved since the plan keeps its place: the last transaction then refuses the import.
        const written = tx
          .insert(mentatRatings)
          .values({ questionId: p.question.id, raterId: p.user.id, version: 1, ...values(p.row), importRun: run.id })
          .onConflictDoNothing()
          .returning({ id: mentatRatings.id })
          .get();
        if (written) event(tx, written.id, p, run.id);
      },
      input.onChunk,
    );
    run.finish((tx) => {
      const refuse = (why: string) => {
        throw new ServiceError(`${why}: nothing was imported. Run the import again.`, undefined, 409);
      };
      if (
        !tx
          .select({ id: visibleMentatBanks.id })
          .from(visibleMentatBanks)
          .where(eq(visibleMentatBanks.id, bankId))
          .get()
      )
        refuse("The bank was removed during the import");
      const mine = tx
        .select({ n: count() })
        // eslint-disable-next-line concord/visible-rows -- counts this import's own hidden rows
        .from(mentatRatings)
        .where(eq(mentatRatings.importRun, run.id))
        .get()!.n;
      if (mine !== fresh.length) refuse("An expert saved a rating of one of these questions during the import");
      // Every rating the plan compared with, at the version it read: one statement per 500 ids.
      const versions = new Map<number, number>();
      for (let i = 0; i < compared.length; i += 500)
        for (const r of versionsOf.all(JSON.stringify(compared.slice(i, i + 500).map((e) => e.id))) as {
          id: number;
          version: number;
        }[])
          versions.set(r.id, r.version);
      for (const p of input.plan)
        if (p.existing && versions.get(p.existing.id) !== p.existing.version)
          refuse(`"${p.user.username}" changed a rating during the import`);
      for (const p of replaced) {
        const v = values(p.row);
        rewrite.run(
          JSON.stringify(v.scores),
          JSON.stringify(v.optionOrder),
          v.shownGender,
          v.comment,
          now,
          now,
          p.existing!.version + 1,
          p.existing!.id,
        );
      }
      // Its own savepoint inside this transaction; it refuses a rater who may no longer join the panel.
      addBankRaters(db, { bankId, raterIds: [...new Set(input.plan.map((p) => p.user.id))], actorId, now });
      return { result: undefined, commit: true };
    });
  } catch (error) {
    run.abandon();
    throw error;
  }
}
