/**
 * The clinician review of model steps from the command line (docs/evaluation.md, "Clinician review of model steps";
 * docs/commands.md, "eval-review-send", "eval-review-report"): the same service functions as the admin's reviews
 * page (`sendReview`, `changeReviewers`, `listReviews`, `reviewsCsv`), so the same refusals and the same figures.
 */
import { eq } from "drizzle-orm";
import { evaluations } from "../../../db/schema";
import { CliError, parseOptions, requireOption, serviceCall, type CliIO, type Command } from "../../cli/command";
import { getDb, type Db } from "../../platform/db.server";
import { writeFileAtomic } from "../../platform/output-files.server";
import { FAILURE_FILTERS, FAILURE_LABELS } from "../domain/failures";
import type { DefensibleRow, ReviewAgreement } from "../domain/model-review";
import { changeReviewers, listReviews, reviewsCsv, sendReview, type ReviewSummary } from "../model-review.server";

function evaluationOrFail(db: Db, name: string): number {
  const row = db.select({ id: evaluations.id }).from(evaluations).where(eq(evaluations.name, name)).get();
  if (!row) throw new CliError(`no evaluation named "${name}"`);
  return row.id;
}

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new CliError(`${flag} takes a whole number, got "${value}"`);
  return Number(value);
}

const sendHelp = `Usage: npm run concord -- eval-review-send --evaluation NAME --name REVIEW --reviewers a,b [--per-step 1|2]
                                   [--failure KIND] [--model M] [--strategy S] [--case PREFIX]
                                   [--sample N] [--seed S]
       npm run concord -- eval-review-send --evaluation NAME --name REVIEW [--add a,b] [--remove c]

Sends the model steps an evaluation's case-list filter picks to a blinded clinician review (docs/evaluation.md,
"Clinician review of model steps"), as the reviews page does: one step per trajectory (its first diagnosis, else its
last step), each given to --per-step of the reviewers. Refused with nothing written, as on the page: an evaluation
without its study, a review name already used, a reviewer unknown, inactive or without the annotator or adjudicator
role, fewer reviewers than --per-step, nothing picked, or more steps than a review holds without --sample.

With --add or --remove, changes the reviewers of the review already sent under that name instead: the steps no
reviewer has started are shared again between the reviewers (an added reviewer takes their share, a removed
reviewer's are given to the others); a removed reviewer's saved labels are kept but they no longer reach them.

  --evaluation NAME   the evaluation (as eval-import named it)
  --name REVIEW       the review's name (at most 80 characters)
  --reviewers a,b     usernames of the reviewers (annotators or adjudicators)
  --per-step 1|2      reviewers per step (2 measures agreement); default 1
  --failure KIND      only trajectories with this failure: ${FAILURE_FILTERS.join(", ")}
  --model M           only this model
  --strategy S        only this strategy
  --case PREFIX       only cases whose id starts with PREFIX
  --sample N          send at most N steps, drawn at random from those picked
  --seed S            the draw's seed (random when not given)
  --add a,b           reviewers to add to the review
  --remove c          reviewers to remove from the review

Exit status: 0 on success, 2 for bad input (nothing written).`;

async function runSend(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    evaluation: { type: "string" },
    name: { type: "string" },
    reviewers: { type: "string" },
    "per-step": { type: "string" },
    failure: { type: "string" },
    model: { type: "string" },
    strategy: { type: "string" },
    case: { type: "string" },
    sample: { type: "string" },
    seed: { type: "string" },
    add: { type: "string" },
    remove: { type: "string" },
  });
  const evaluationName = requireOption(values.evaluation, "--evaluation");
  const name = requireOption(values.name, "--name");
  const db = getDb();
  if (values.add !== undefined || values.remove !== undefined) {
    const others = (
      ["reviewers", "per-step", "failure", "model", "strategy", "case", "sample", "seed"] as const
    ).filter((k) => values[k] !== undefined);
    if (others.length) throw new CliError(`--add and --remove change a review: --${others[0]} is not taken with them`);
    const evaluationId = evaluationOrFail(db, evaluationName);
    const changed = serviceCall(() =>
      changeReviewers(db, {
        evaluationId,
        name,
        add: list(values.add),
        remove: list(values.remove),
        actorId: null,
      }),
    );
    io.out(
      `Review "${name}": ${changed.moved} step${changed.moved === 1 ? "" : "s"} not yet started shared again; ` +
        `reviewers now ${changed.reviewers.join(", ")}.\n`,
    );
    return 0;
  }
  const reviewers = list(requireOption(values.reviewers, "--reviewers"));
  const perStep = values["per-step"] ?? "1";
  if (perStep !== "1" && perStep !== "2") throw new CliError(`--per-step takes 1 or 2, got "${perStep}"`);
  const failure = values.failure ?? "";
  if (failure && !(FAILURE_FILTERS as readonly string[]).includes(failure))
    throw new CliError(`--failure takes one of ${FAILURE_FILTERS.join(", ")}, got "${failure}"`);
  const limit = wholeNumber(values.sample, "--sample");
  const seed = wholeNumber(values.seed, "--seed");
  const evaluationId = evaluationOrFail(db, evaluationName);
  const sent = serviceCall(() =>
    sendReview(db, {
      evaluationId,
      name,
      filter: { failure, model: values.model ?? "", strategy: values.strategy ?? "", q: values.case ?? "" },
      reviewers,
      perItem: perStep === "2" ? 2 : 1,
      limit: limit ?? null,
      seed,
      actorId: null,
    }),
  );
  io.out(
    `Sent ${sent.items} model step${sent.items === 1 ? "" : "s"} (of ${sent.matched} the filter picks) to the review ` +
      `"${name.trim()}".\n`,
  );
  return 0;
}

export const evalReviewSendCommand: Command = {
  name: "eval-review-send",
  summary: "Send an evaluation's model steps to a blinded clinician review, or change a review's reviewers",
  help: sendHelp,
  run: runSend,
};

const pct = (x: number | null) => (x === null ? "—" : `${(100 * x).toFixed(1)}%`);
const coef = (x: number | null) => (x === null ? "—" : x.toFixed(3));

/** The page's words (app/evaluation/ui/review-figures.tsx), as text. */
function failureWords(failure: DefensibleRow["failure"]): string {
  return failure === "any" ? "Any step sent" : FAILURE_LABELS[failure];
}

function agreementLine(a: ReviewAgreement): string {
  if (a.items === 0) return `Agreement: ${a.kappaReason}.`;
  return (
    `Agreement on ${a.items} step${a.items === 1 ? "" : "s"} reviewed twice: ${pct(a.percentAgreement)} agree, ` +
    `Gwet's AC1 ${coef(a.ac1)}, Cohen's κ ${a.kappa === null ? `— (${a.kappaReason})` : coef(a.kappa)}.`
  );
}

function reviewText(r: ReviewSummary): string {
  const lines = [
    `Review "${r.name}": ${r.items} step${r.items === 1 ? "" : "s"}, ${r.perItem === 2 ? "two reviewers" : "one reviewer"} each`,
    `  ${r.reviewers.map((p) => `${p.username}: ${p.submitted} of ${p.total} submitted`).join(" · ")}`,
    "  Failure | Model | Reviewed | Judged defensible | Reviewers split",
  ];
  const shown = [...r.defensible].sort((a, b) =>
    a.failure === b.failure ? (a.model === "" ? -1 : b.model === "" ? 1 : 0) : 0,
  );
  for (const d of shown)
    lines.push(
      `  ${failureWords(d.failure)} | ${d.model || "all models"} | ${d.reviewed} | ` +
        `${d.reviewed ? `${d.defensible} of ${d.reviewed} (${pct(d.share)})` : "—"} | ${d.split}`,
    );
  lines.push(`  ${agreementLine(r.agreement)}`);
  return lines.join("\n") + "\n";
}

const reportHelp = `Usage: npm run concord -- eval-review-report --evaluation NAME [--review NAME] [--json | --csv OUT]

Prints the figures the reviews page shows (docs/evaluation.md, "Clinician review of model steps"), newest review
first: each reviewer's progress, per failure and model the steps reviewed, judged defensible (all its submitted
labels say so) and split, and the reviewers' agreement on the steps reviewed twice (percent agreement, Gwet's AC1,
Cohen's κ when exactly two reviewers labelled them).

  --evaluation NAME   the evaluation
  --review NAME       only this review
  --json              print the same as one JSON array: [{name, perItem, items, createdAt, filter, reviewers:
                      [{username, submitted, total}], defensible: [{failure, model, reviewed, defensible, split,
                      share}], agreement: {items, percentAgreement, ac1, kappa, kappaReason}}]; shares are fractions
  --csv OUT           write reviews.csv (as the page's file: one row per review, failure and model, then the
                      review's agreement), whole or not at all

Exit status: 0 on success, 2 for bad input.`;

async function runReport(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    evaluation: { type: "string" },
    review: { type: "string" },
    json: { type: "boolean", default: false },
    csv: { type: "string" },
  });
  const evaluationName = requireOption(values.evaluation, "--evaluation");
  if (values.json && values.csv !== undefined) throw new CliError("give --json or --csv, not both");
  const db = getDb();
  const evaluationId = evaluationOrFail(db, evaluationName);
  const reviews = listReviews(db, evaluationId, values.review);
  if (values.review !== undefined && reviews.length === 0)
    throw new CliError(`evaluation "${evaluationName}" has no review named "${values.review}"`);
  if (values.csv !== undefined) {
    writeFileAtomic(values.csv, reviewsCsv(db, evaluationId, values.review));
    io.out(`Wrote ${values.csv} (${reviews.length} review${reviews.length === 1 ? "" : "s"}).\n`);
    return 0;
  }
  if (values.json) {
    io.out(JSON.stringify(reviews, null, 2) + "\n");
    return 0;
  }
  if (reviews.length === 0) io.out(`Evaluation "${evaluationName}" has no review yet.\n`);
  io.out(reviews.map(reviewText).join("\n"));
  return 0;
}

export const evalReviewReportCommand: Command = {
  name: "eval-review-report",
  summary: "The figures of an evaluation's clinician reviews: defensible share per failure and model, agreement",
  help: reportHelp,
  run: runReport,
};
