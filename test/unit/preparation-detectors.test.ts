/**
 * The minimisation detectors, one category at a time (docs/preparation.md, "Detectors"), the score table, the review's
 * rules, and the recall and precision the docs report (test/fixtures/preparation/detector-report.json) as the
 * detectors produce them on the labelled set.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  applySpans,
  detectAges,
  detectAll,
  detectDates,
  detectFamily,
  detectNames,
  detectPhysical,
  detectPlaces,
  detectQuotes,
  detectScores,
  detectSurgeryInjury,
  namePatternProblem,
  type Span,
} from "../../app/preparation/domain/detectors";
import { ageGroupOf } from "../../app/preparation/domain/age-groups";
import { DEFAULT_SCORE_TABLE, parseScoreTable, scoreRangeOf } from "../../app/preparation/domain/score-table";
import { evaluateDetectors, type LabelledNote } from "../../app/preparation/domain/detector-evaluation";
import {
  checkReview,
  DEFAULT_SETTINGS,
  detectorConfig,
  minimisedSections,
  normaliseReview,
  proposalsOf,
} from "../../app/preparation/domain/review";
import { parseListFile } from "../../app/preparation/domain/settings-files";
import { proposalAgreement, type SubmittedReview } from "../../app/preparation/domain/agreement";

const texts = (text: string, spans: Span[]) => spans.map((s) => text.slice(s.start, s.end));
const NO_LISTS = { places: [], names: [], institutions: [], namePatterns: [] };
const CONFIG = detectorConfig(DEFAULT_SETTINGS);

describe("dates and times", () => {
  it("finds numeric dates, written dates in English and Romanian, years, times and weekdays", () => {
    const t =
      "Admitted 12.03.2015 at 14:30, seen 2015-03-14 and 3/7/21; first episode in March 2012, again on 21 June 2023, la 5 martie 2019, ora 10, on Monday, vineri, at 8 pm; since 1998.";
    expect(texts(t, detectDates(t))).toEqual([
      "12.03.2015",
      "14:30",
      "2015-03-14",
      "3/7/21",
      "March 2012",
      "21 June 2023",
      "5 martie 2019",
      "ora 10",
      "Monday",
      "vineri",
      "8 pm",
      "1998",
    ]);
  });
  it("leaves scores, durations and ordinary numbers alone", () => {
    const t = "MMSE 24/30, for 3 weeks, 2 tablets of 50 mg, nu mai poate dormi.";
    expect(detectDates(t)).toEqual([]);
  });
});

describe("places", () => {
  it("finds the configured places as whole words, diacritics and case aside", () => {
    const t = "From Mediaș, works in SIBIU; not in Sibiul or Mediașului.";
    expect(texts(t, detectPlaces(t, { places: ["Mediaș", "Sibiu"] }))).toEqual(["Mediaș", "SIBIU"]);
  });
  it("finds a place introduced by its kind", () => {
    const t = "Born in the village of Rășinari, lives in satul Cisnădioara, comuna Șelimbăr, on Morii Street.";
    expect(texts(t, detectPlaces(t, { places: [] }))).toEqual([
      "village of Rășinari",
      "satul Cisnădioara",
      "comuna Șelimbăr",
      "Morii Street",
    ]);
  });
});

describe("person and institution names", () => {
  it("finds titled names, institution patterns and the configured lists", () => {
    const t =
      "Seen by Dr. Ana Popescu and dr. Ionescu at Spitalul Județean Sibiu, then Saint Mary Hospital; Marinescu agreed.";
    expect(texts(t, detectNames(t, { ...NO_LISTS, names: ["Marinescu"] })).sort()).toEqual(
      ["Dr. Ana Popescu", "dr. Ionescu", "Spitalul Județean Sibiu", "Saint Mary Hospital", "Marinescu"].sort(),
    );
  });
  it("uses the project's own patterns and refuses one that is not a regular expression", () => {
    const t = "Case discussed with psih. Elena Dobre.";
    expect(texts(t, detectNames(t, { ...NO_LISTS, namePatterns: ["psih\\. \\p{Lu}\\p{L}+ \\p{Lu}\\p{L}+"] }))).toEqual([
      "psih. Elena Dobre",
    ]);
    expect(namePatternProblem("(unclosed")).toMatch(/not a regular expression/);
    expect(namePatternProblem("a*")).toMatch(/matches empty text/);
    expect(namePatternProblem("Dr\\. \\w+")).toBeNull();
  });
});

describe("family references", () => {
  it("finds relations in English and Romanian, generalised in the notes' language", () => {
    const t = "Her mother and twin sister; fiica ei și soțul; no reason to son-of-a-gun.";
    const spans = detectFamily(t, "ro");
    expect(texts(t, spans)).toEqual(["mother", "twin", "sister", "fiica", "soțul", "son"]);
    expect(spans[0]!.replacement).toBe("ruda");
    expect(detectFamily("his wife", "en")[0]!.replacement).toBe("relative");
  });
  it("does not find relations inside other words", () => {
    expect(detectFamily("reason, sonography, person, mamography", "en")).toEqual([]);
  });
});

describe("quoted speech", () => {
  it("finds speech in any of the usual quotation marks", () => {
    const t = `She said "I want to die", then „nu mai pot”, “enough” and «basta».`;
    expect(texts(t, detectQuotes(t))).toEqual(['"I want to die"', "„nu mai pot”", "“enough”", "«basta»"]);
  });
  it("leaves a quoted test name or code alone", () => {
    expect(detectQuotes(`the "MMSE" and "F32.1"`)).toEqual([]);
  });
});

describe("physical features", () => {
  it("finds the feature and at most four words of its description, up to the clause's end", () => {
    const t = "A tattoo of a snake on the neck, and scars on both forearms. Poartă cicatrici pe antebraț.";
    expect(texts(t, detectPhysical(t))).toEqual([
      "tattoo of a snake",
      "scars on both forearms",
      "Poartă cicatrici pe antebraț",
    ]);
  });
});

describe("surgeries and injuries", () => {
  it("finds operations, -ectomies and injuries in both languages", () => {
    const t = "Appendectomy in childhood. Operated for appendicitis in 2009. Fractură de femur. Shoulder injury.";
    expect(texts(t, detectSurgeryInjury(t))).toEqual([
      "Appendectomy in childhood",
      "Operated for appendicitis",
      "Fractură de femur",
      "injury",
    ]);
  });
});

describe("ages", () => {
  it("finds an age in its usual words and generalises it into the paper's groups", () => {
    const t = "A 45-year-old, aged 71, 32 years old, 29 yo, în vârstă de 63 de ani, 84 ani, age: 18, 78 years old.";
    const spans = detectAges(t);
    expect(texts(t, spans)).toEqual(["45", "71", "32", "29", "63", "84", "18", "78"]);
    expect(spans.map((s) => s.replacement)).toEqual([
      "38-47",
      "68-77",
      "28-37",
      "28-37",
      "58-67",
      "78+",
      "18-27",
      "78+",
    ]);
  });
  it("puts every age in its group at the bounds", () => {
    expect([17, 18, 27, 28, 37, 38, 47, 48, 57, 58, 67, 68, 77, 78, 104].map(ageGroupOf)).toEqual([
      "under 18",
      "18-27",
      "18-27",
      "28-37",
      "28-37",
      "38-47",
      "38-47",
      "48-57",
      "48-57",
      "58-67",
      "58-67",
      "68-77",
      "68-77",
      "78+",
      "78+",
    ]);
  });
  it("takes no year, dose or count for an age", () => {
    expect(detectAges("in 2015, 50 mg, 3 admissions, 200 years old")).toEqual([]);
  });
});

describe("test scores", () => {
  it("finds a score after its test's name or alias and gives its range", () => {
    const t = "MMSE 22/30, HAM-D score of 18, HDRS: 25, QI 85, scl 90 190, Scor MMSE de 25, PANSS total 96.";
    const spans = detectScores(t, DEFAULT_SCORE_TABLE);
    expect(spans.map((s) => [t.slice(s.start, s.end), s.replacement]).sort()).toEqual(
      [
        ["22/30", "19-23"],
        ["18", "17-23"],
        ["25", "24-52"],
        ["85", "85-115"],
        ["190", "180-269"],
        ["25", "24-30"],
        ["96", "95-115"],
      ].sort(),
    );
  });
  it("proposes nothing for a score outside every range of its test", () => {
    expect(detectScores("MMSE 45", DEFAULT_SCORE_TABLE)).toEqual([]);
    expect(scoreRangeOf(DEFAULT_SCORE_TABLE[0]!, 31)).toBeNull();
  });
  it("reads a project's own table and refuses a bad one by its lines", () => {
    const ok = parseScoreTable("test,aliases,from,to\nMOCA,MoCA|mocha,0,17\nMOCA,,18,25\nMOCA,,26,30\n");
    expect(ok.errors).toEqual([]);
    expect(ok.table).toEqual([
      {
        test: "MOCA",
        aliases: ["MoCA", "mocha"],
        ranges: [
          { from: 0, to: 17 },
          { from: 18, to: 25 },
          { from: 26, to: 30 },
        ],
      },
    ]);
    expect(detectScores("MoCA 21/30", ok.table)[0]!.replacement).toBe("18-25");
    const bad = parseScoreTable("test,aliases,from,to\nMOCA,,0,17\nMOCA,,10,20\n,,1,2\nX,,a,2\nY,,5,1\n");
    expect(bad.table).toEqual([]);
    expect(bad.errors.map((e) => e.line)).toEqual([3, 4, 5, 6]);
    expect(parseScoreTable("test,from\n").errors[0]!.message).toMatch(/missing column aliases, to/);
  });
});

describe("all detectors on one text", () => {
  it("keeps one proposal where spans overlap, the generalising one first", () => {
    const t = `She said "I am 45 years old" in Sibiu.`;
    const spans = detectAll(t, { ...detectorConfig(DEFAULT_SETTINGS), places: ["Sibiu"] }, "en");
    expect(spans.map((s) => [s.category, t.slice(s.start, s.end)])).toEqual([
      ["age", "45"],
      ["place", "Sibiu"],
    ]);
    expect(applySpans(t, spans)).toBe(`She said "I am 38-47 years old" in.`);
  });
});

describe("the review's rules", () => {
  const note = {
    sections: [{ order: 1, kind: "presenting_symptoms", content: 'A 45-year-old from Sibiu, her mother said "no".' }],
    proposals: [] as ReturnType<typeof proposalsOf>,
  };
  note.proposals = proposalsOf(note.sections, { ...CONFIG, places: ["Sibiu"] }, "en");

  it("asks for a decision on every proposal, or an exclusion with a reason", () => {
    const none = { decisions: {}, missed: [], excluded: false, exclusionReason: "" };
    expect(Object.keys(checkReview(none, note))).toHaveLength(note.proposals.length);
    expect(checkReview({ ...none, excluded: true }, note)).toEqual({
      exclusionReason: "Say why the case is excluded.",
    });
    expect(checkReview({ ...none, excluded: true, exclusionReason: "violence" }, note)).toEqual({});
  });

  it("applies accepted, edited and rejected proposals and the missed marks", () => {
    const [age, place, family, quote] = note.proposals;
    const text = note.sections[0]!.content;
    const start = text.indexOf("from");
    const values = normaliseReview(
      {
        decisions: {
          [age!.id]: { action: "accept" },
          [place!.id]: { action: "edit", text: "a town" },
          [family!.id]: { action: "reject" },
          [quote!.id]: { action: "accept" },
          stale: { action: "accept" },
        },
        missed: [{ section: 0, start, end: start + 4, category: "place", replacement: "in" }],
        excluded: false,
        exclusionReason: "ignored",
      },
      note.proposals,
    );
    expect(Object.keys(values.decisions)).not.toContain("stale");
    expect(values.exclusionReason).toBe("");
    expect(checkReview(values, note)).toEqual({});
    expect(minimisedSections(note, values)![0]!.content).toBe("A 38-47-year-old in a town, her mother said.");
    expect(minimisedSections(note, { ...values, excluded: true })).toBeNull();
  });

  it("refuses a missed mark outside the text or over a proposal", () => {
    const [age] = note.proposals;
    const values = {
      decisions: Object.fromEntries(note.proposals.map((p) => [p.id, { action: "accept" as const }])),
      missed: [
        { section: 0, start: 0, end: 999, category: "place" as const, replacement: "" },
        { section: 0, start: age!.start, end: age!.end + 1, category: "age" as const, replacement: "" },
      ],
      excluded: false,
      exclusionReason: "",
    };
    expect(checkReview(values, note)).toEqual({
      "missed:0": "This marked text is not in the note.",
      "missed:1": "This marked text overlaps another proposal or mark.",
    });
  });
});

describe("the settings' list files", () => {
  it("takes one entry a line, without blanks and comments", () => {
    expect(parseListFile("\uFEFF# places\nSibiu\r\n\n  Mediaș  \n#x\n")).toEqual(["Sibiu", "Mediaș"]);
  });
});

describe("how well the detectors do (docs/preparation.md)", () => {
  const fixture = JSON.parse(readFileSync("test/fixtures/preparation/labelled-notes.json", "utf8")) as {
    config: typeof NO_LISTS;
    notes: LabelledNote[];
  };
  const reported = JSON.parse(readFileSync("test/fixtures/preparation/detector-report.json", "utf8"));

  it("reports the recall and precision the detectors produce on the labelled set", () => {
    const scores = evaluateDetectors(fixture.notes, detectorConfig({ ...DEFAULT_SETTINGS, ...fixture.config }));
    expect(scores).toEqual(reported);
    // Every category is labelled and found at least once, so none of the figures is empty.
    for (const s of scores) {
      expect(s.gold, s.category).toBeGreaterThan(5);
      expect(s.recall, s.category).toBeGreaterThan(0.5);
    }
  });

  it("finds every gold span where the labelled text says it is", () => {
    for (const n of fixture.notes) for (const g of n.gold) expect(n.sections[g.section], n.id).toContain(g.text);
  });

  it("quotes the same figures in docs/preparation.md", () => {
    const doc = readFileSync("docs/preparation.md", "utf8");
    for (const s of reported as { category: string; gold: number; detected: number; matched: number }[])
      expect(doc).toMatch(new RegExp(`\\| \`${s.category}\` \\| ${s.gold} \\| ${s.detected} \\| ${s.matched} \\|`));
  });
});

describe("agreement between two reviewers on the proposals", () => {
  it("counts the proposals both decided, their percent agreement and Cohen's κ, and the exclusions", () => {
    const a = (action: "accept" | "edit" | "reject") => ({ action });
    const reviews: SubmittedReview[] = [
      { reviewer: "a", noteId: 1, excluded: false, decisions: { p1: a("accept"), p2: a("reject"), p3: a("accept") } },
      { reviewer: "b", noteId: 1, excluded: false, decisions: { p1: a("accept"), p2: a("accept"), p3: a("accept") } },
      { reviewer: "a", noteId: 2, excluded: false, decisions: { q1: a("reject") } },
      { reviewer: "b", noteId: 2, excluded: false, decisions: { q1: a("reject") } },
      // Excluded by one: its proposals are not compared; the exclusion decisions differ.
      { reviewer: "a", noteId: 3, excluded: true, decisions: {} },
      { reviewer: "b", noteId: 3, excluded: false, decisions: { r1: a("accept") } },
      // Reviewed once: not compared.
      { reviewer: "a", noteId: 4, excluded: false, decisions: { s1: a("accept") } },
    ];
    const r = proposalAgreement(reviews);
    expect(r).toMatchObject({
      reviewers: 2,
      proposals: 4,
      percentAgreement: 0.75,
      notesReviewedTwice: 3,
      exclusionAgreed: 2,
    });
    // Observed 3/4; chance: a = (2 accept, 2 reject)/4, b = (3 accept, 1 reject)/4 → 0.5·0.75 + 0.5·0.25 = 0.5.
    expect(r.kappa).toBeCloseTo((0.75 - 0.5) / (1 - 0.5), 10);
    expect(proposalAgreement(reviews.slice(4)).kappaReason).toBe("no proposal was decided by two reviewers");
  });
});
