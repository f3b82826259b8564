/**
 * One schema for a workspace's values, read by the page and by the server (docs/architecture.md, "One workspace
 * page"): what the page marks before a submission is what the server's parse answers, at the same fields, in the same
 * words — for judge validation in detail, then for every workspace from one table: each schema lives in its
 * protocol's domain (app/<protocol>/domain/*-values.ts).
 */
import { describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { parseDraftPost, schemaFieldErrors } from "~/platform/forms";
import { ratingIncomplete, RatingValuesSchema } from "~/judge-validation/domain/rating-values";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { annotationWorkspace } from "~/annotation/ui/annotation-workspace";
import { AnnotationValuesSchema, EMPTY_VALUES } from "~/annotation/domain/annotation-values";
import { adjudicationWorkspace } from "~/adjudication/ui/adjudication-workspace";
import { AdjudicationValuesSchema as AdjudicationDraftSchema } from "~/adjudication/domain/adjudication-values";
import { ratingWorkspace } from "~/judge-validation/ui/rating-workspace";
import { voteWorkspace } from "~/screening/ui/vote-workspace";
import { VoteValuesSchema } from "~/screening/domain/vote-values";
import { optionRatingWorkspace } from "~/mentat/ui/option-rating-workspace";
import { OptionRatingSchema } from "~/mentat/domain/option-rating-values";
import { reviewWorkspace } from "~/case-review/ui/review-workspace";
import { ReviewValuesSchema } from "~/case-review/domain/review-values";

function serverErrors(values: unknown): Record<string, string> {
  const form = new FormData();
  form.set("intent", "draft");
  form.set("version", "0");
  form.set("values", JSON.stringify(values));
  const post = parseDraftPost(form, RatingValuesSchema, { id: "1", maxLength: 1_000_000 });
  return post.ok ? {} : post.failure.errors;
}

describe("schemaFieldErrors", () => {
  const base = { primaryAnswer: "committed", infoRequest: "none", icdCodes: "", diagnosisNames: "", notes: "" };

  it("marks the fields the server's parse marks, with its words", () => {
    const tooLong = {
      ...base,
      notes: "x".repeat(TEXT_LIMITS.notes + 1),
      icdCodes: "F".repeat(TEXT_LIMITS.icdCodes + 1),
    };
    const page = schemaFieldErrors(RatingValuesSchema, tooLong);
    expect(Object.keys(page).sort()).toEqual(["icdCodes", "notes"]);
    expect(page).toEqual(serverErrors(tooLong));
  });

  it("finds nothing in values the server takes", () => {
    expect(schemaFieldErrors(RatingValuesSchema, base)).toEqual({});
    expect(serverErrors(base)).toEqual({});
  });

  it("a value the schema does not know is marked at its field", () => {
    expect(Object.keys(schemaFieldErrors(RatingValuesSchema, { ...base, primaryAnswer: "maybe" }))).toEqual([
      "primaryAnswer",
    ]);
  });

  it("the completeness rule is the server's too: both features named", () => {
    expect(Object.keys(ratingIncomplete({ ...base, primaryAnswer: "", infoRequest: "" })).sort()).toEqual([
      "infoRequest",
      "primaryAnswer",
    ]);
    expect(ratingIncomplete({ ...base, primaryAnswer: "committed", infoRequest: "none" })).toEqual({});
  });
});

/**
 * Every workspace: the definition's schema is the one its route parses with (the service module's export, which the
 * route passes to answerDraftPost), and a value it refuses is refused by the server's parse at the same field.
 */
interface SchemaRow {
  workspace: string;
  page: ZodType;
  route: ZodType;
  ok: Record<string, unknown>;
  bad: Record<string, unknown>[];
}

describe.each<SchemaRow>([
  {
    workspace: "annotation",
    page: annotationWorkspace.schema,
    route: AnnotationValuesSchema,
    ok: { ...EMPTY_VALUES, sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 },
    bad: [
      { notes: "n".repeat(TEXT_LIMITS.notes + 1) },
      { missingOther: "o".repeat(TEXT_LIMITS.missingOther + 1) },
      { sufficiency: "maybe" },
      { icd10: "F".repeat(17) },
    ],
  },
  {
    workspace: "adjudication",
    page: adjudicationWorkspace.schema,
    route: AdjudicationDraftSchema,
    ok: { ...EMPTY_VALUES, notes: undefined, rationale: "Reviewed." },
    bad: [{ rationale: "r".repeat(TEXT_LIMITS.notes + 1) }, { missingInfo: ["not-a-kind"] }, { earliestSection: 9 }],
  },
  {
    workspace: "judge validation",
    page: ratingWorkspace.schema,
    route: RatingValuesSchema,
    ok: { primaryAnswer: "committed", infoRequest: "none", icdCodes: "", diagnosisNames: "", notes: "" },
    bad: [{ primaryAnswer: "maybe" }, { diagnosisNames: "d".repeat(TEXT_LIMITS.diagnosisNames + 1) }],
  },
  {
    workspace: "screening",
    page: voteWorkspace.schema,
    route: VoteValuesSchema,
    ok: { relevant: "yes", category: "anxiety", confidence: "high", notes: "" },
    bad: [
      { relevant: "perhaps" },
      { category: "c".repeat(TEXT_LIMITS.category + 1) },
      { confidence: "total" },
      { notes: "n".repeat(TEXT_LIMITS.notes + 1) },
    ],
  },
  {
    workspace: "MENTAT",
    page: optionRatingWorkspace.schema,
    route: OptionRatingSchema,
    ok: { scores: [10, 20, 30, 40, 50], comment: "" },
    bad: [{ scores: [10, 20, 30, 40, 101] }, { scores: [1, 2] }, { comment: "c".repeat(TEXT_LIMITS.comment + 1) }],
  },
  {
    workspace: "case review",
    page: reviewWorkspace.schema,
    route: ReviewValuesSchema,
    ok: { naturalness: 4, validity: 4, realism: 4, decision: null, reason: "", comment: "" },
    bad: [{ naturalness: 6 }, { decision: "maybe" }, { reason: "r".repeat(TEXT_LIMITS.comment + 1) }],
  },
])("$workspace: one value schema for the page and the server", ({ page, route, ok, bad }) => {
  const server = (values: unknown) => {
    const form = new FormData();
    form.set("intent", "draft");
    form.set("version", "0");
    form.set("values", JSON.stringify(values));
    const post = parseDraftPost(form, route, { id: "1", maxLength: 1_000_000 });
    return post.ok ? { status: 200, errors: {} } : { status: post.failure.status, errors: post.failure.errors };
  };

  it("the page's schema is the route's", () => {
    expect(page).toBe(route);
  });

  it("takes complete values on both sides", () => {
    expect(schemaFieldErrors(page, ok)).toEqual({});
    expect(server(ok)).toEqual({ status: 200, errors: {} });
  });

  for (const change of bad)
    it(`refuses a bad ${Object.keys(change).join()} on the page and on the server, at the field, in the same words`, () => {
      const values = { ...ok, ...change };
      const onPage = schemaFieldErrors(page, values);
      expect(Object.keys(onPage)).toEqual(Object.keys(change));
      expect(server(values)).toEqual({ status: 422, errors: onPage });
    });
});
