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
import { createHash } from "node:crypto";
import { mentatAnnotationRows, type AnnotationReport, type MentatAnnotationRow } from "./domain/mentat-annotations";
import type { Db, Tx } from "../platform/db.server";
import { beginImportRun } from "../platform/import-runs.server";
import { ServiceError } from "../platform/service-error";
import { recordEvent } from "../audit/audit.server";
import { addBankRaters } from "./panel.server";
import { requireBankByName } from "./banks.server";
import { listUsers } from "../accounts/users.server";
import { pushAll } from "../stats/extremes";
import {
  FILE_CHANGED_MESSAGE,
  FileChangedError,
  secondPass,
  textSource,
  type ImportSource,
} from "../formats/import-source";

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

/**
 * What the first pass keeps of a rating row (docs/reliability.md, "Memory bounded by the longest line"): where it is,
 * what it rates, and two hashes — of the scores and comment (compared with a stored rating) and of every field
 * written (compared by the second pass) — but not the row, which the second pass reads again.
 */
interface Planned {
  file: string;
  fileIndex: number;
  line: number;
  qNo: string;
  mentatRater: string;
  sameHash: string;
  passHash: string;
}

const sha256 = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");
/** A rating's scores and comment: equal for a stored rating the file leaves unchanged. */
const sameHashOf = (scores: unknown, comment: string) => sha256([scores, comment]);
const passHashOf = (row: MentatAnnotationRow) =>
  sha256([row.qNo, row.gender, row.scores, row.optionOrder, row.comment]);

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
  // The first pass: every file checked row by row, keeping of each rating only `Planned`, and the file's sha256.
  const sources = input.files.map((f) => (typeof f.text === "string" ? textSource(f.text, f.name) : f.text));
  const firstSha256: (string | null)[] = [];
  for (const [fileIndex, f] of input.files.entries()) {
    const report: AnnotationReport = { errors: [], warnings: [], rater: "", participant: "" };
    const start = planned.length;
    for (const row of mentatAnnotationRows(f.text, report))
      planned.push({
        file: f.name,
        fileIndex,
        line: row.line,
        qNo: row.qNo,
        // The rater is the second row's, read before the first rating.
        mentatRater: report.rater,
        sameHash: sameHashOf(row.scores, row.comment),
        passHash: passHashOf(row),
      });
    firstSha256.push(sources[fileIndex]!.sha256());
    if (report.errors.length) {
      planned.length = start;
      pushAll(
        errors,
        report.errors.map((e) => ({ file: f.name, ...e })),
      );
      continue;
    }
    pushAll(
      warnings,
      report.warnings.map((w) => ({ file: f.name, ...w })),
    );
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
    const same = existing?.status === "submitted" && sameHashOf(existing.scores, existing.comment) === row.sameHash;
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

  writeRatings(db, {
    bankId: bank.id,
    plan,
    files: { inputs: input.files, sources, firstSha256, planned },
    actorId: input.actorId,
    now,
    ...chunks,
  });
  return { ok: true, written: true, ...summary };
}

/** The files of an import, as the second pass reads them again. */
interface RatingFiles {
  inputs: AnnotationFileInput[];
  sources: ImportSource[];
  firstSha256: (string | null)[];
  /** Every row the first pass read, file after file. */
  planned: Planned[];
}

/** A rating to write: its plan and its row, read again. */
type RatingWrite = { p: PlannedRating; row: MentatAnnotationRow };

/**
 * The second pass: each file read again through `secondPass` (app/formats/import-source.ts), every row checked to be
 * the one the first pass checked (same question, same hash of every field, in the same place; the same bytes), and
 * the rows the plan writes (new ratings, and those replacing stored ones; not the unchanged ones, nor a duplicate
 * that a later row replaces) handed on in batches of at most 500, each written before the next is read. A file
 * changed between the passes is refused with its name; the caller removes what was written.
 */
function* ratingBatches(files: RatingFiles, plan: readonly PlannedRating[]): Generator<RatingWrite[]> {
  const toWrite = new Map<Planned, PlannedRating>();
  for (const p of plan) if (!p.same) toWrite.set(p.row, p);
  let at = 0;
  for (const [k, f] of files.inputs.entries()) {
    const start = at;
    while (at < files.planned.length && files.planned[at]!.fileIndex === k) at++;
    const first = files.planned.slice(start, at);
    function* rows(): Generator<MentatAnnotationRow> {
      const report: AnnotationReport = { errors: [], warnings: [], rater: "", participant: "" };
      yield* mentatAnnotationRows(f.text, report);
      if (report.errors.length) throw new FileChangedError();
    }
    let next = 0;
    try {
      for (const batch of secondPass({
        source: files.sources[k]!,
        records: rows,
        keyOf: (row) => ({ key: row.qNo, hash: passHashOf(row) }),
        first: first.map((p) => ({ key: p.qNo, hash: p.passHash })),
        firstSha256: files.firstSha256[k]!,
      })) {
        const writes: RatingWrite[] = [];
        for (const row of batch) {
          const p = toWrite.get(first[next++]!);
          if (p) writes.push({ p, row });
        }
        if (writes.length) yield writes;
      }
    } catch (error) {
      if (error instanceof FileChangedError)
        throw new ServiceError(`${f.name}: ${FILE_CHANGED_MESSAGE}`, undefined, 409);
      throw error;
    }
  }
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
    /** The files, read again (`ratingBatches`), and what their first pass kept. */
    files: RatingFiles;
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
  const values = (row: MentatAnnotationRow) => ({
    status: "submitted" as const,
    scores: row.scores,
    optionOrder: row.optionOrder,
    shownGender: row.gender,
    comment: row.comment,
    updatedAt: now,
    submittedAt: now,
  });
  const event = (tx: Tx, id: number, w: RatingWrite, importRun: string | null) =>
    recordEvent(tx, {
      actorId,
      entity: "mentat_rating",
      entityId: id,
      action: "import",
      changes: {
        source: `${w.p.row.file}:${w.p.row.line}`,
        scores: [w.p.existing ? w.p.existing.scores : null, w.row.scores],
        optionOrder: [w.p.existing ? w.p.existing.optionOrder : null, w.row.optionOrder],
      },
      at: now,
      importRun,
    });
  const fresh = input.plan.filter((p) => !p.existing).length;
  // The rows that replace stored ratings, kept for the last transaction (at most the ratings already stored).
  const replaced: RatingWrite[] = [];
  const compared = input.plan.flatMap((p) => (p.existing ? [p.existing] : []));
  const { run } = beginImportRun(db, `mentat-ratings:${bankId}`, () => null, { chunkBudgetMs: input.chunkBudgetMs });
  try {
    // New ratings, and the events of the ratings it replaces (hidden with the run until its last transaction, and
    // removed with it), in short transactions as the second pass reads them: the last one then only checks versions
    // and rewrites rows.
    let written = 0;
    for (const batch of ratingBatches(input.files, input.plan)) {
      for (const w of batch) if (w.p.existing) replaced.push(w);
      const offset = written;
      run.writeInChunks(
        batch,
        (tx, w) => {
          if (w.p.existing) return void event(tx, w.p.existing.id, w, run.id);
          // A rating an expert saved since the plan keeps its place: the last transaction then refuses the import.
          const inserted = tx
            .insert(mentatRatings)
            .values({
              questionId: w.p.question.id,
              raterId: w.p.user.id,
              version: 1,
              ...values(w.row),
              importRun: run.id,
            })
            .onConflictDoNothing()
            .returning({ id: mentatRatings.id })
            .get();
          if (inserted) event(tx, inserted.id, w, run.id);
        },
        input.onChunk && ((done) => input.onChunk!(offset + done)),
      );
      written += batch.length;
    }
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
      if (mine !== fresh) refuse("An expert saved a rating of one of these questions during the import");
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
      for (const { p, row } of replaced) {
        const v = values(row);
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
