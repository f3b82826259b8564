/**
 * One schema for a workspace's values, read by the page and by the server (docs/architecture.md, "One workspace
 * page"): what the page marks before a submission is what the server's parse answers, at the same fields, in the same
 * words — here for judge validation, whose schema lives in app/judge-validation/domain/rating-values.ts.
 */
import { describe, expect, it } from "vitest";
import { parseDraftPost, schemaFieldErrors } from "~/platform/forms";
import { ratingIncomplete, RatingValuesSchema } from "~/judge-validation/domain/rating-values";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";

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
