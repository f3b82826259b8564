/**
 * MENTAT's released annotation files as MENTAT's own pipeline reads them (`mentat-import-ratings --layout
 * mentat-release`; docs/mentat.md, "MENTAT's released annotations"): every rating row of every file kept — a
 * rater rated most questions several times, once per wording (q_male, q_female, q_they), and MENTAT's fit counts
 * each row — plus the question creator's pseudo-rater `crtr` (100 on the intended option) for every rated question
 * but those MENTAT's notebook leaves out. The rows go to `mentat_release_ratings`, not to any expert's workspace;
 * `mentat-fit` adds them to the bank's submitted ratings (fits.server.ts:bankAnnotationRows).
 *
 * Every file is read and every question checked first; any problem is reported as FILE:LINE and nothing is written.
 * The bank's previous release (if any) is replaced in the same transaction as the new rows are written.
 */
import { count, eq } from "drizzle-orm";
import { z } from "zod";
import { mentatReleaseRatings } from "../../db/schema";
import { visibleMentatBanks } from "../../db/schema-visible";
import {
  creatorScores,
  MENTAT_CREATOR_RATER,
  MENTAT_NO_CREATOR_QUESTIONS,
  parseMentatAnnotationCsv,
} from "./domain/mentat-annotations";
import type { Db } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { writeTransaction } from "../work-items/engine.server";
import { requireBankByName } from "./banks.server";
import { bankQuestionsByExternalId, type AnnotationFileInput, type FileIssue } from "./mentat-annotations.server";
import { pushAll } from "../stats/extremes";

/** Release raters appear in fits under this prefix, apart from the bank's experts (docs/mentat.md). */
export const RELEASE_RATER_PREFIX = "mentat:";

export const MentatReleaseImportSchema = z.object({
  bankName: z.string().trim().min(1, "give the bank's name"),
  idTemplate: z
    .string()
    .default("{q_no}")
    .refine((t) => t.includes("{q_no}"), "the id template must contain {q_no}"),
  /** Add the creator's pseudo-rater (MENTAT's pipeline does). */
  creator: z.boolean().default(true),
  /** MENTAT question numbers that get no creator row; default MENTAT's own list. */
  noCreator: z.array(z.string().regex(/^\d+$/)).default([...MENTAT_NO_CREATOR_QUESTIONS]),
  dryRun: z.boolean().default(false),
});
export type MentatReleaseImportOptions = z.input<typeof MentatReleaseImportSchema>;

export type MentatReleaseImportResult =
  | { ok: false; errors: FileIssue[]; warnings: FileIssue[] }
  | {
      ok: true;
      written: boolean;
      bankName: string;
      files: number;
      /** Rating rows read from the files (all kept). */
      ratings: number;
      /** Creator rows added. */
      creatorRows: number;
      questions: number;
      /** Rows of a (question, rater) that already had one from another wording or file. */
      repeats: number;
      raters: { rater: string; ratings: number }[];
      /** Rows of the bank's previous release that this import replaced. */
      replacedRelease: number;
      warnings: FileIssue[];
    };

export function importMentatRelease(
  db: Db,
  input: { files: AnnotationFileInput[]; options: MentatReleaseImportOptions; actorId: string | null; now?: number },
): MentatReleaseImportResult {
  const options = MentatReleaseImportSchema.parse(input.options);
  const errors: FileIssue[] = [];
  const warnings: FileIssue[] = [];
  const read: { file: string; line: number; rater: string; qNo: string; wording: string; scores: number[] }[] = [];
  const wordingOf = { male: "q_male", female: "q_female", nonbinary: "q_they" } as const;
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
    for (const row of parsed.file.rows)
      read.push({
        file: f.name,
        line: row.line,
        rater: parsed.file.rater,
        qNo: row.qNo,
        wording: wordingOf[row.gender as keyof typeof wordingOf] ?? row.gender,
        scores: row.scores,
      });
    if (parsed.file.rater === MENTAT_CREATOR_RATER)
      errors.push({
        file: f.name,
        line: 2,
        message: `rater id "${MENTAT_CREATOR_RATER}" is MENTAT's name for the question's creator; a rater's file cannot use it.`,
      });
  }
  if (errors.length) return { ok: false, errors, warnings };

  const bank = requireBankByName(db, options.bankName);
  const questions = bankQuestionsByExternalId(db, bank.id);
  const idOf = (qNo: string) => options.idTemplate.replace("{q_no}", qNo);
  for (const row of read)
    if (!questions.has(idOf(row.qNo)))
      errors.push({
        file: row.file,
        line: row.line,
        message: `bank "${bank.name}" has no question "${idOf(row.qNo)}" (q_no ${row.qNo}).`,
      });
  if (errors.length) return { ok: false, errors, warnings };

  const rows = read.map((r) => ({
    questionId: questions.get(idOf(r.qNo))!.id,
    rater: r.rater,
    wording: r.wording,
    scores: r.scores,
    source: `${r.file}:${r.line}`,
  }));
  const seen = new Set<string>();
  let repeats = 0;
  for (const r of read) {
    const key = `${r.qNo}\u0000${r.rater}`;
    if (seen.has(key)) repeats++;
    seen.add(key);
  }
  // MENTAT's notebook adds one creator row per rated question, in order of q_no, except its excluded questions.
  const rated = [...new Set(read.map((r) => r.qNo))].sort((a, b) => Number(a) - Number(b));
  const creatorRows = options.creator
    ? rated
        .filter((qNo) => !options.noCreator.includes(qNo))
        .map((qNo) => {
          const q = questions.get(idOf(qNo))!;
          return {
            questionId: q.id,
            rater: MENTAT_CREATOR_RATER,
            wording: "creator",
            scores: creatorScores(q.intended),
            source: `intended answer of question ${q.externalId}`,
          };
        })
    : [];
  const counts = new Map<string, number>();
  for (const r of [...rows, ...creatorRows]) counts.set(r.rater, (counts.get(r.rater) ?? 0) + 1);
  const previous = db
    .select({ n: count() })
    .from(mentatReleaseRatings)
    .where(eq(mentatReleaseRatings.bankId, bank.id))
    .get()!.n;
  const summary = {
    bankName: bank.name,
    files: input.files.length,
    ratings: rows.length,
    creatorRows: creatorRows.length,
    questions: rated.length,
    repeats,
    raters: [...counts].map(([rater, ratings]) => ({ rater, ratings })).sort((a, b) => (a.rater < b.rater ? -1 : 1)),
    replacedRelease: previous,
    warnings,
  };
  if (options.dryRun) return { ok: true, written: false, ...summary };

  const now = input.now ?? Date.now();
  // A few hundred rows: one transaction, so a fit sees the old release or the new one, never a mixture.
  writeTransaction(db, (tx) => {
    if (
      !tx.select({ id: visibleMentatBanks.id }).from(visibleMentatBanks).where(eq(visibleMentatBanks.id, bank.id)).get()
    )
      throw new Error("The bank was removed during the import.");
    tx.delete(mentatReleaseRatings).where(eq(mentatReleaseRatings.bankId, bank.id)).run();
    for (const r of [...rows, ...creatorRows])
      tx.insert(mentatReleaseRatings)
        .values({ bankId: bank.id, ...r })
        .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "mentat_bank",
      entityId: bank.id,
      action: "import_release",
      changes: {
        files: input.files.map((f) => f.name),
        ratings: rows.length,
        creatorRows: creatorRows.length,
        replacedRelease: previous,
      },
      at: now,
    });
  });
  return { ok: true, written: true, ...summary };
}
