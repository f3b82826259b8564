/**
 * The screening release's CSVs (included.csv, categories.csv) are meant for spreadsheets: a category named like a
 * formula is quoted there, while included.jsonl keeps it as it is (docs/security.md, "Spreadsheet exports").
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parsePythonCsv as parseCsv } from "../../app/formats/csv-text";
import type { Db } from "../../app/platform/db.server";
import { createScreeningStudy } from "../../app/screening/screening.server";
import { importScreeningFiles } from "../../app/screening/screening-import.server";
import { exportScreeningRelease } from "../../app/screening/screening-release.server";
import { openRound } from "../../app/screening/screening-rounds.server";
import { freshDb, makeUser } from "../support/db";
import { enc, itemsJsonl, labelsCsv, voteAll } from "../support/screening";

const FORMULA = '=HYPERLINK("http://evil.example","x")';
let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

describe("screening release CSVs", () => {
  it("quote a formula-like category in included.csv and categories.csv, not in included.jsonl", async () => {
    const admin = await makeUser(db, "boss", ["admin"]);
    const reviewers = await Promise.all(["rev1", "rev2", "rev3"].map((u) => makeUser(db, u, ["rater"])));
    const study = createScreeningStudy(db, {
      name: "HB",
      settings: {
        description: "",
        categories: [FORMULA, "anxiety", "other"],
        reviewersPerRound: 3,
        inclusionVotes: 2,
        controlThreshold: 0.05,
        controlsPerRound: 2,
      },
      actorId: admin.id,
    });
    const r = importScreeningFiles(db, {
      studyId: study.id,
      items: { bytes: enc(itemsJsonl()), filename: "hb.jsonl" },
      labels: { bytes: enc(labelsCsv()), filename: "screen.csv" },
      actorId: admin.id,
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    openRound(db, {
      studyId: study.id,
      reviewerIds: reviewers.map((u) => u.id),
      seed: 1,
      controls: 2,
      actorId: admin.id,
    });
    for (const u of reviewers) voteAll(db, u.id, "truthful", FORMULA);
    const release = exportScreeningRelease(db, { studyId: study.id, allowIncomplete: true });
    if (!release.ok) throw new Error(release.message);
    const included = parseCsv(release.files["included.csv"]);
    const modal = included[0]!.indexOf("modal_category");
    expect(included.slice(1).map((row) => row[modal])).toContain("'" + FORMULA);
    expect(included.slice(1).every((row) => !row.some((cell) => cell.startsWith("=")))).toBe(true);
    const categories = parseCsv(release.files["categories.csv"]);
    expect(categories[1]![0]).toBe("'" + FORMULA);
    expect(release.files["included.jsonl"]).toContain(JSON.stringify(FORMULA));
  });
});
