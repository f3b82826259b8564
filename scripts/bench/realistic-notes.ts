/**
 * Realistic released CSVs for the bulk benchmarks (scripts/bench/bulk-import.ts): the reference's released layout
 * (docs/formats.md, "Released CSV": header row, 13 columns, CRLF rows, minimal quoting as Python's csv writes it)
 * with notes that look like clinical notes: every case different, three to five non-empty sections of about 300
 * bytes each, written over several lines, with commas, quoted speech in double quotes (doubled in the file), some
 * non-ASCII punctuation, and reference labels on every case (so that every case is final and export-gold exports
 * it). Seeded: the same (n, seed) gives the same bytes.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { REFERENCE_LABEL_COLUMNS } from "../../app/labels/labels";
import { cachedFile, sourceVersion } from "./dataset-cache";

/** mulberry32: a small seeded generator, enough for test data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const AGE_GROUPS = ["18-27", "28-37", "38-47", "48-57", "58-67", "68-77", "78+"];
const CODES = ["F32.1", "F33.1", "F41.1", "F20.0", "F31.1", "F43.1", "F10.2", "F60.3", "F42.2", "F50.2", "F03", "F29"];
const DURATIONS = ["two weeks", "three months", "about a year", "six weeks", "a few days", "several years"];
const PEOPLE = ["her partner", "his wife", "the GP", "a neighbour", "her mother", "his brother", "the ward nurse"];
const QUOTES = [
  "I can't switch my head off at night",
  "everything feels pointless, like I'm watching from behind glass",
  "they're talking about me on the radio",
  "I just want to sleep and not wake up",
  "I've been fine, honestly — it's the others who worry",
  "my heart races and I think I'm dying",
  "I haven't eaten properly since Christmas",
  "I keep checking the locks, ten, twenty times",
];
/** Phrases per section kind, combined at random into sentences. */
const PHRASES: Record<(typeof SECTION_KINDS)[number], string[]> = {
  presenting_symptoms: [
    "Presents with low mood, poor sleep and reduced appetite",
    "Reports early waking at 4 am, loss of interest in work and friends",
    "Describes racing thoughts, irritability and spending sprees",
    "Complains of palpitations, sweating and a fear of collapsing in shops",
    "Brought in by family after days without sleep; pressured speech",
    "Hears voices commenting on actions, worse in the evening",
    "Weight loss of 6 kg, fatigue, poor concentration at work",
  ],
  psychiatric_history: [
    "One previous depressive episode treated with sertraline, good response",
    "No previous admissions; brief contact with community services in 2019",
    "Two admissions under section, last one four years ago",
    "History of self-harm by cutting in adolescence, none since",
    "Alcohol use: about 40 units a week, no withdrawal seizures",
    "Family history of bipolar disorder (father), suicide of an uncle",
  ],
  psychiatric_exam: [
    "Appearance: unkempt, poor eye contact, psychomotor slowing",
    'Speech: slow, quiet, long pauses; mood subjectively "low", objectively depressed',
    "Thought form: tangential at times, no formal thought disorder",
    "Perception: denies hallucinations; no evidence of responding to stimuli",
    "Cognition: orientated to time, place and person; MMSE 29/30",
    "Insight: partial — accepts being unwell, unsure about treatment",
  ],
  psychological_exam: [
    "PHQ-9 score 19, GAD-7 score 12",
    "Beck Depression Inventory 31, in the severe range",
    "Y-BOCS 24: moderate to severe obsessions and compulsions",
    "Formulation: long-standing low self-worth, recent loss of job as trigger",
    "Coping: avoidance, withdrawal; some protective factors (children, faith)",
    "Risk: passive thoughts of death, no plan, no intent",
  ],
  secondary_diagnoses: [
    "Hypertension, on amlodipine",
    "Type 2 diabetes, diet controlled",
    "Hypothyroidism — TSH normal on last check",
    "Chronic back pain; uses codeine occasionally",
    "Asthma, mild, intermittent",
    "No known physical illness",
  ],
};

/** One section's text: about `target` bytes, several lines, commas and (sometimes) quoted speech. */
function sectionText(random: () => number, kind: (typeof SECTION_KINDS)[number], i: number, target: number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const lines: string[] = [];
  let bytes = 0;
  while (bytes < target) {
    let sentence = `${pick(PHRASES[kind])}, for ${pick(DURATIONS)}`;
    const r = random();
    if (r < 0.35) sentence += `. In the patient's words: "${pick(QUOTES)}"`;
    else if (r < 0.55)
      sentence += `; ${pick(PEOPLE)} says "${pick(QUOTES)}", and adds that things got worse in week ${1 + (i % 9)}`;
    else if (r < 0.7) sentence += ` (seen on ${1 + (i % 28)}/${1 + ((i >> 5) % 12)}, score ${(i * 7) % 31})`;
    sentence += ".";
    lines.push(sentence);
    bytes += Buffer.byteLength(sentence) + 1;
  }
  return lines.join("\n");
}

/** A cell as Python's csv module writes it (minimal quoting). */
const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/**
 * Writes a released CSV of `n` realistic notes to `file`; returns the mean bytes of a non-empty section. Case ids
 * `b0`, `b1`, …; T is 3 to 5 (empty sections anywhere but the first); reference labels on every case, three in
 * four sufficient with a diagnosis and τ in 1..T.
 */
function writeRealisticReleasedCsv(file: string, n: number, seed = 25): { sectionBytes: number } {
  const random = prng(seed);
  const fd = openSync(file, "w");
  let pending = "";
  let sectionBytes = 0;
  let sections = 0;
  try {
    pending += ["id", "age_group", "sex", ...SECTION_KINDS, ...REFERENCE_LABEL_COLUMNS].join(",");
    pending += "\r\n";
    for (let i = 0; i < n; i++) {
      const empty = new Set<number>();
      const drop = Math.floor(random() * 3);
      while (empty.size < drop) empty.add(1 + Math.floor(random() * 4));
      const texts = SECTION_KINDS.map((kind, k) => {
        if (empty.has(k)) return "";
        const text = sectionText(random, kind, i, 190 + Math.floor(random() * 100));
        sectionBytes += Buffer.byteLength(text);
        sections++;
        return text;
      });
      const T = 5 - empty.size;
      const sufficient = random() < 0.75;
      const row = [
        `b${i}`,
        AGE_GROUPS[Math.floor(random() * AGE_GROUPS.length)]!,
        random() < 0.55 ? "F" : "M",
        ...texts,
        sufficient ? "1" : "0",
        random() < 0.8 ? "1" : "0",
        sufficient ? CODES[Math.floor(random() * CODES.length)]! : "",
        random() < 0.7 ? "1" : "0",
        sufficient ? String(1 + Math.floor(random() * T)) : "",
      ];
      pending += row.map(cell).join(",") + "\r\n";
      if (pending.length > 1 << 20) {
        writeSync(fd, pending);
        pending = "";
      }
    }
    writeSync(fd, pending);
  } finally {
    closeSync(fd);
  }
  return { sectionBytes: Math.round(sectionBytes / Math.max(1, sections)) };
}

/** The generator's version: a hash of this file and of the column lists it takes from the app. */
const GENERATOR_VERSION = sourceVersion(
  [fileURLToPath(import.meta.url)],
  JSON.stringify([SECTION_KINDS, REFERENCE_LABEL_COLUMNS]),
);

/**
 * A released CSV of `n` realistic notes (writeRealisticReleasedCsv, same seed, same bytes) from the bench's data set
 * cache (scripts/bench/dataset-cache.ts), generated there the first time. The caller must not change or remove it.
 */
export function cachedRealisticReleasedCsv(n: number, seed = 25): string {
  return cachedFile(GENERATOR_VERSION, `realistic-${n}-${seed}.csv`, (path) =>
    writeRealisticReleasedCsv(path, n, seed),
  );
}
