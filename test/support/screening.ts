/**
 * A small screening corpus for the screening tests (docs/screening.md), in HealthBench's JSONL form, with the automatic screen's
 * labels, and helpers that vote through the reviewer service as truthful or lenient reviewers would.
 *
 * Truth: items r01–r04, b01 and the screen's misses n01–n05 are about mental health; b02 and n06–n20 are not.
 * Every rubric holds RUBRIC_MARKER and every screen rationale RATIONALE_MARKER, so tests can prove they never reach
 * a reviewer.
 */
import type { Db } from "../../app/platform/db.server";
import { getReviewEntry, listReviewerEntries, submitVote } from "../../app/screening/screening-review.server";

export const RUBRIC_MARKER = "RUBRIC-SECRET-7f3a";
export const RATIONALE_MARKER = "SCREEN-RATIONALE-91c2";
export const CATEGORIES = ["anxiety", "mood disorders", "sleep", "other"];

/** A study's settings for the tests: 3 reviewers, 2 relevant votes include, 10 controls. */
export const SETTINGS = {
  description: "",
  categories: CATEGORIES,
  reviewersPerRound: 3,
  inclusionVotes: 2,
  controlThreshold: 0.05,
  controlsPerRound: 10,
};

export interface CorpusItem {
  id: string;
  label: "relevant" | "borderline" | "not_relevant";
  truth: boolean;
  text: string;
}

const MENTAL = [
  "I keep having panic attacks before work and my heart races",
  "Since the baby was born I cry every day and feel nothing for her",
  "I have not slept more than three hours a night for a month and I feel hopeless",
  "My psychiatrist raised my sertraline dose and now I feel jittery",
  "I worry constantly about everything and cannot switch off",
];
const SOMATIC = [
  "What is the best way to treat a sprained ankle",
  "How long should I boil an egg at high altitude",
  "My knee clicks when I climb stairs",
  "Is it safe to take ibuprofen with a cold",
  "What vaccines do I need before travelling to Kenya",
];

export function corpus(): CorpusItem[] {
  const items: CorpusItem[] = [];
  for (let i = 1; i <= 4; i++)
    items.push({ id: `r${String(i).padStart(2, "0")}`, label: "relevant", truth: true, text: MENTAL[i % 5]! });
  items.push({ id: "b01", label: "borderline", truth: true, text: MENTAL[0]! });
  items.push({ id: "b02", label: "borderline", truth: false, text: SOMATIC[0]! });
  for (let i = 1; i <= 20; i++)
    items.push({
      id: `n${String(i).padStart(2, "0")}`,
      label: "not_relevant",
      truth: i <= 5,
      text: i <= 5 ? MENTAL[i % 5]! : SOMATIC[i % 5]!,
    });
  return items;
}

export function itemsJsonl(items = corpus()): string {
  return (
    items
      .map((it) =>
        JSON.stringify({
          prompt: [
            { role: "user", content: `${it.text} (${it.id})` },
            { role: "assistant", content: "Can you tell me a little more about that?" },
            { role: "user", content: "It started a few weeks ago." },
          ],
          completion: [],
          prompt_id: it.id,
          example_tags: ["theme:context_seeking"],
          rubrics: [{ criterion: `${RUBRIC_MARKER}: suggests seeing a clinician`, points: 5, tags: ["axis:accuracy"] }],
        }),
      )
      .join("\n") + "\n"
  );
}

export function labelsCsv(items = corpus()): string {
  return (
    "prompt_id,label,category,confidence,rationale\n" +
    items
      .map(
        (it) => `${it.id},${it.label},${it.label === "relevant" ? "anxiety" : ""},0.8,${RATIONALE_MARKER} ${it.label}`,
      )
      .join("\n") +
    "\n"
  );
}

export const enc = (s: string) => new TextEncoder().encode(s);

/** Whether an item is truly about mental health, from the id the test corpus writes into its first message. */
export function truthOf(id: string): boolean {
  return corpus().find((c) => c.id === id)!.truth;
}

/**
 * Submits a vote on every item of the reviewer's open rounds. A truthful reviewer reads the item's text and votes
 * its truth; a lenient one says yes to everything. Returns the number of votes submitted.
 */
export function voteAll(db: Db, userId: string, style: "truthful" | "lenient", category = "anxiety"): number {
  let n = 0;
  for (const row of listReviewerEntries(db, userId)) {
    const view = getReviewEntry(db, { userId, entryId: row.entryId })!;
    const id = /\((\w+)\)$/.exec(view.entry.messages[0]!.content)![1]!;
    const relevant = style === "lenient" || truthOf(id);
    const r = submitVote(db, {
      userId,
      entryId: row.entryId,
      values: {
        relevant: relevant ? "yes" : "no",
        category: relevant ? category : "",
        confidence: "high",
        notes: relevant ? `note on ${id}` : "",
      },
      version: view.version,
    });
    if (!r.ok) throw new Error(`vote on ${id} failed: ${r.message}`);
    n++;
  }
  return n;
}
