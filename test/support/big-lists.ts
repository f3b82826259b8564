/**
 * Lists of any size written straight into the database (one transaction of prepared inserts), for the tests that
 * check a list page shows a window, not the whole list (docs/architecture.md, "Pages are windows"): a judge
 * validation set's sample with its ratings, a screening round's entries with their votes, a MENTAT bank's questions
 * with their raters, and a case review set's items with their raters.
 */
import type { Db } from "../../app/platform/db.server";

const BUCKETS = ["answer", "refusal", "info_request"];

/**
 * A judge validation set in rating with `items` sampled responses, each given to the three `raterIds`; the first
 * third of the first rater's ratings are submitted, the next tenth drafts.
 */
export function writeBigJudgeSet(db: Db, opts: { name: string; items: number; raterIds: string[] }): number {
  const c = db.$client;
  const now = Date.now();
  let setId = 0;
  c.transaction(() => {
    setId = Number(
      c
        .prepare(
          `INSERT INTO judge_sets (name, status, targets, drawn_at, created_at) VALUES (?, 'rating', '{}', ?, ?)`,
        )
        .run(opts.name, now, now).lastInsertRowid,
    );
    const importId = Number(
      c
        .prepare(
          `INSERT INTO judge_response_imports (set_id, filename, sha256, format, rows, imported_at)
           VALUES (?, 'r.jsonl', ?, 'jsonl', ?, ?)`,
        )
        .run(setId, `sha-${opts.name}`, opts.items, now).lastInsertRowid,
    );
    const insResponse = c.prepare(
      `INSERT INTO judge_responses (set_id, import_id, position, sample_id, model, strategy, step_index,
         is_last_section, model_output_raw, record, bucket, derived_action)
       VALUES (?, ?, ?, ?, 'm', 's', 0, 1, 'out', '{}', ?, 'answer')`,
    );
    const insItem = c.prepare(
      `INSERT INTO judge_items (set_id, response_id, annotation_id, bucket, derived_action, position)
       VALUES (?, ?, ?, ?, 'answer', ?)`,
    );
    const insRating = c.prepare(
      `INSERT INTO judge_ratings (item_id, rater_id, status, assigned_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
    );
    for (let i = 0; i < opts.items; i++) {
      const bucket = BUCKETS[i % BUCKETS.length]!;
      const responseId = Number(insResponse.run(setId, importId, i, `s${i}`, bucket).lastInsertRowid);
      // Annotation ids in a different order from the positions, so the two sorts differ.
      const annotationId = `ann_${String((i * 7919) % 100_000).padStart(5, "0")}_${i}`;
      const itemId = Number(insItem.run(setId, responseId, annotationId, bucket, i + 1).lastInsertRowid);
      opts.raterIds.forEach((r, j) => {
        const status =
          j > 0 ? "assigned" : i < opts.items / 3 ? "submitted" : i < opts.items * 0.43 ? "draft" : "assigned";
        insRating.run(itemId, r, status, now, status === "assigned" ? null : now);
      });
    }
  })();
  return setId;
}

/**
 * A screening study with one open round of `items` items reviewed by `reviewerIds`; the first reviewer has submitted
 * the first third of the round and drafted the next tenth. Returns the study's and the round's ids.
 */
export function writeBigScreeningRound(
  db: Db,
  opts: { name: string; items: number; reviewerIds: string[]; roundNumber?: number; studyId?: number },
): { studyId: number; roundId: number } {
  const c = db.$client;
  const now = Date.now();
  let studyId = opts.studyId ?? 0;
  let roundId = 0;
  c.transaction(() => {
    if (!studyId)
      studyId = Number(
        c
          .prepare(`INSERT INTO screening_studies (name, categories, created_at) VALUES (?, '["a","b"]', ?)`)
          .run(opts.name, now).lastInsertRowid,
      );
    roundId = Number(
      c
        .prepare(
          `INSERT INTO screening_rounds (study_id, number, seed, reviewers_per_round, inclusion_votes,
             control_threshold, opened_at) VALUES (?, ?, 1, ?, 2, 0.05, ?)`,
        )
        .run(studyId, opts.roundNumber ?? 1, opts.reviewerIds.length, now).lastInsertRowid,
    );
    for (const r of opts.reviewerIds)
      c.prepare(`INSERT INTO screening_reviewers (round_id, reviewer_id, assigned_at) VALUES (?, ?, ?)`).run(
        roundId,
        r,
        now,
      );
    const base = Number(
      (
        c.prepare(`SELECT coalesce(max(position), 0) AS p FROM screening_items WHERE study_id = ?`).get(studyId) as {
          p: number;
        }
      ).p,
    );
    const insItem = c.prepare(
      `INSERT INTO screening_items (study_id, external_id, position, kind, content, source, content_hash, created_at)
       VALUES (?, ?, ?, 'text', ?, 'test', ?, ?)`,
    );
    const insEntry = c.prepare(
      `INSERT INTO screening_round_items (round_id, item_id, position, is_control, stratum) VALUES (?, ?, ?, 0, 's')`,
    );
    const insVote = c.prepare(
      `INSERT INTO screening_votes (round_item_id, round_id, reviewer_id, status, relevant, updated_at)
       VALUES (?, ?, ?, ?, 1, ?)`,
    );
    for (let i = 0; i < opts.items; i++) {
      const p = base + i + 1;
      const itemId = Number(
        insItem.run(studyId, `it-${p}`, p, `Item ${p} opening words.`, `h${p}`, now).lastInsertRowid,
      );
      const entryId = Number(insEntry.run(roundId, itemId, i + 1).lastInsertRowid);
      const status = i < opts.items / 3 ? "submitted" : i < opts.items * 0.43 ? "draft" : null;
      if (status) insVote.run(entryId, roundId, opts.reviewerIds[0], status, now);
    }
  })();
  return { studyId, roundId };
}

const DOMAINS = ["diagnosis", "treatment", "monitoring", "triage", "documentation"];

/**
 * A MENTAT bank of `questions` questions, domains in turn (triage and documentation the preference domains), rated
 * by `raterIds`; the first rater has submitted the first third of the preference questions and drafted the next
 * tenth.
 */
export function writeBigBank(db: Db, opts: { name: string; questions: number; raterIds: string[] }): number {
  const c = db.$client;
  const now = Date.now();
  let bankId = 0;
  c.transaction(() => {
    bankId = Number(
      c
        .prepare(
          `INSERT INTO mentat_banks (name, preference_domains, created_at) VALUES (?, '["triage","documentation"]', ?)`,
        )
        .run(opts.name, now).lastInsertRowid,
    );
    for (const r of opts.raterIds)
      c.prepare(`INSERT INTO mentat_bank_raters (bank_id, rater_id, assigned_at) VALUES (?, ?, ?)`).run(bankId, r, now);
    const insQuestion = c.prepare(
      `INSERT INTO mentat_questions (bank_id, external_id, position, domain, texts, options, intended_answer,
         content_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '["a","b","c","d","e"]', 0, ?, ?, ?)`,
    );
    const insRating = c.prepare(
      `INSERT INTO mentat_ratings (question_id, rater_id, status, scores, option_order, updated_at)
       VALUES (?, ?, ?, '[1,2,3,4,5]', '[0,1,2,3,4]', ?)`,
    );
    const texts = JSON.stringify({ neutral: "A patient of <AGE> asks." });
    const preference = [];
    for (let i = 0; i < opts.questions; i++) {
      const domain = DOMAINS[i % DOMAINS.length]!;
      const id = Number(
        insQuestion.run(
          bankId,
          `q-${String((i * 7919) % 100_000).padStart(5, "0")}-${i}`,
          i,
          domain,
          texts,
          `h${i}`,
          now,
          now,
        ).lastInsertRowid,
      );
      if (domain === "triage" || domain === "documentation") preference.push(id);
    }
    preference.forEach((id, i) => {
      const status = i < preference.length / 3 ? "submitted" : i < preference.length * 0.43 ? "draft" : null;
      if (status) insRating.run(id, opts.raterIds[0], status, now);
    });
  })();
  return bankId;
}

/**
 * A case review set of `items` items (every fourth a seed) reviewed by `raterIds`; the first rater has submitted the
 * first third and drafted the next tenth.
 */
export function writeBigReviewSet(db: Db, opts: { name: string; items: number; raterIds: string[] }): number {
  const c = db.$client;
  const now = Date.now();
  let setId = 0;
  c.transaction(() => {
    setId = Number(
      c.prepare(`INSERT INTO review_sets (name, created_at) VALUES (?, ?)`).run(opts.name, now).lastInsertRowid,
    );
    for (const r of opts.raterIds)
      c.prepare(`INSERT INTO review_set_raters (set_id, rater_id, assigned_at) VALUES (?, ?, ?)`).run(setId, r, now);
    const insItem = c.prepare(
      `INSERT INTO review_items (set_id, external_id, position, kind, text, content_hash, created_at)
       VALUES (?, ?, ?, ?, 'A generated case.', ?, ?)`,
    );
    const insJudgement = c.prepare(
      `INSERT INTO review_judgements (item_id, rater_id, status, updated_at) VALUES (?, ?, ?, ?)`,
    );
    for (let i = 0; i < opts.items; i++) {
      const id = Number(
        insItem.run(
          setId,
          `r-${String((i * 7919) % 100_000).padStart(5, "0")}-${i}`,
          i,
          i % 4 ? "case" : "seed",
          `h${i}`,
          now,
        ).lastInsertRowid,
      );
      const status = i < opts.items / 3 ? "submitted" : i < opts.items * 0.43 ? "draft" : null;
      if (status) insJudgement.run(id, opts.raterIds[0], status, now);
    }
  })();
  return setId;
}
