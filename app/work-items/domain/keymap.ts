/**
 * The one keymap of every workspace (docs/architecture.md, "Keymap"): the keys every workspace shares (next and
 * previous item, submit and go to the next, search, guidelines, help) and each workspace's own label keys. The
 * workspaces' key handlers, their shortcut cards and the help page all read this table, so a key means the same thing
 * wherever it is pressed, and a label key is never a navigation key.
 */

/** One key of the table: what is pressed (`KeyboardEvent.key`, lower case), how it is shown, and what it does. */
export interface KeyBinding {
  /** The values of `KeyboardEvent.key` (lower case) that trigger it; empty for combinations handled elsewhere. */
  keys: readonly string[];
  /** How the key is shown: each entry is one key cap, "+" joins a combination ("Ctrl+Enter"), "–" a range. */
  show: string;
  does: string;
  /** What each letter of `keys` means here, in a word or two ("committed"), for the letters that differ between workspaces. */
  means?: Readonly<Record<string, string>>;
}

/** The keys every workspace answers to, with the same meaning everywhere. Single keys act outside text fields. */
export const COMMON_KEYS = {
  next: { keys: ["j"], show: "J", does: "next item, without submitting" },
  previous: { keys: ["k"], show: "K", does: "previous item, without submitting" },
  submitNext: {
    keys: [],
    show: "Ctrl+Enter",
    does: "submit and go to the next item (⌘+Enter on a Mac; works in text fields too)",
  },
  search: { keys: ["/"], show: "/", does: "search (the workspace's search field, when it has one)" },
  guidelines: { keys: ["?"], show: "?", does: "the study's guidelines" },
  help: { keys: ["h"], show: "H", does: "the help page: every workspace's keys" },
  leaveField: { keys: [], show: "Esc", does: "leave a text field, so that the single keys work again" },
} as const satisfies Record<string, KeyBinding>;

export type CommonKey = keyof typeof COMMON_KEYS;

/** Keys that move between items or pages: no workspace may use them to record a label. */
export const NAVIGATION_KEYS: readonly string[] = (["next", "previous", "guidelines", "help"] as const).flatMap(
  (k) => COMMON_KEYS[k].keys,
);

export type WorkspaceId =
  | "annotation"
  | "adjudication"
  | "judge-validation"
  | "screening"
  | "mentat"
  | "case-review"
  | "preparation"
  | "correction"
  | "model-review";

export interface WorkspaceKeymap {
  title: string;
  /** The workspace's list page. */
  list: string;
  /** What one item is called there ("case", "response", …). */
  item: string;
  /** What `/` does here (search a picker, or go to a field), or null when the workspace has no such field. */
  search: string | null;
  /** Whether the workspace has a previous item (its items have an order the user walks through). */
  previous: boolean;
  /** What Ctrl+Enter does there, when it is not "submit and go to the next item". */
  submitDoes?: string;
  /** The workspace's own keys, which record labels or move the focus to a field. */
  own: readonly KeyBinding[];
}

/** Label keys shared by the two workspaces that record a case label (annotation and adjudication). */
const CASE_LABEL_KEYS: readonly KeyBinding[] = [
  { keys: ["s", "i"], show: "S / I", does: "sufficient / insufficient", means: { s: "sufficient", i: "insufficient" } },
  { keys: ["1", "2", "3", "4", "5"], show: "1–5", does: "earliest sufficient section" },
  { keys: ["m"], show: "M", does: "missing information (Tab, Space)", means: { m: "missing information" } },
];

export const WORKSPACE_KEYMAPS: Record<WorkspaceId, WorkspaceKeymap> = {
  annotation: {
    title: "Annotation",
    list: "/annotate",
    item: "case",
    search:
      "search ICD-10 codes (arrows, Enter to choose, Enter again to confirm a category, Esc to leave); on a note not yet judged sufficient it goes to that question and records nothing",
    previous: true,
    own: CASE_LABEL_KEYS,
  },
  adjudication: {
    title: "Adjudication",
    list: "/adjudicate",
    item: "case",
    search:
      "search ICD-10 codes (arrows, Enter to choose, Enter again to confirm a category, Esc to leave); on a note not yet judged sufficient it goes to that question and records nothing",
    previous: true,
    submitDoes: "record the step: the independent judgement, then the decision (and go to the next case)",
    own: [
      ...CASE_LABEL_KEYS,
      { keys: ["e"], show: "E", does: "rationale (final decision): explain it", means: { e: "rationale" } },
    ],
  },
  "judge-validation": {
    title: "Judge validation",
    list: "/judge-validation",
    item: "response",
    search: "go to the ICD codes field (plain text: codes separated by commas; Tab to names and notes)",
    previous: true,
    own: [
      {
        keys: ["o", "d", "n"],
        show: "O / D / N",
        does: "primary answer: committed (one diagnosis) / differential / none",
        means: { o: "committed", d: "differential", n: "none" },
      },
      {
        keys: ["p", "g", "x"],
        show: "P / G / X",
        does: "information request: specific / generic only / none",
        means: { p: "specific", g: "generic only", x: "none" },
      },
    ],
  },
  screening: {
    title: "Screening",
    list: "/screening",
    item: "item",
    search: null,
    previous: true,
    own: [
      { keys: ["y", "n"], show: "Y / N", does: "relevant: yes / no", means: { y: "yes", n: "no" } },
      { keys: ["t"], show: "T", does: "category: its type (arrows, Enter or Esc to leave)", means: { t: "category" } },
      { keys: ["1", "2", "3"], show: "1–3", does: "confidence" },
    ],
  },
  mentat: {
    title: "MENTAT option ratings",
    list: "/expert-ratings",
    item: "question",
    search: null,
    previous: true,
    own: [
      { keys: ["1", "2", "3", "4", "5"], show: "1–5", does: "go to an option's slider" },
      { keys: [], show: "← → / PgUp PgDn", does: "change the rating by 1 / by 10 (an unrated option starts at 50)" },
      { keys: [], show: "Home / End", does: "0 / 100" },
      { keys: ["c"], show: "C", does: "comment", means: { c: "comment" } },
    ],
  },
  "case-review": {
    title: "MentalBench case review",
    list: "/expert-ratings",
    item: "case",
    search: null,
    previous: true,
    own: [
      {
        keys: ["a", "r"],
        show: "A / R",
        does: "accept / reject a seed (then type the reason)",
        means: { a: "accept", r: "reject" },
      },
      { keys: ["1", "2", "3", "4", "5"], show: "1–5", does: "score the highlighted dimension, then move to the next" },
      { keys: ["c"], show: "C", does: "comment", means: { c: "comment" } },
    ],
  },
  preparation: {
    title: "Minimisation review",
    list: "/preparation",
    item: "note",
    search: null,
    previous: true,
    own: [
      {
        keys: ["a", "w", "r"],
        show: "A / W / R",
        does: "accept / reword (edit) / reject the current proposal (then on to the next undecided one)",
        means: { a: "accept", w: "reword", r: "reject" },
      },
      { keys: ["u"], show: "U", does: "go to the next undecided proposal", means: { u: "next undecided" } },
      { keys: ["f"], show: "F", does: "flag the selected text as missed", means: { f: "flag missed text" } },
    ],
  },
  correction: {
    title: "Translation correction",
    list: "/preparation/corrections",
    item: "note",
    search: null,
    previous: true,
    own: [{ keys: ["1", "2", "3", "4", "5"], show: "1–5", does: "go to a section's English text" }],
  },
  "model-review": {
    title: "Review of model steps",
    list: "/model-review",
    item: "step",
    search: null,
    previous: true,
    own: [
      {
        keys: ["y", "n"],
        show: "Y / N",
        does: "clinically defensible: yes / no (then type why)",
        means: { y: "yes", n: "no" },
      },
      { keys: ["e"], show: "E", does: "why: explain the judgement", means: { e: "rationale" } },
    ],
  },
};

/** One letter that means one thing in this workspace and another elsewhere (the labels' own initials). */
export interface LetterClash {
  key: string;
  here: string;
  elsewhere: { workspace: WorkspaceId; title: string; means: string }[];
}

/**
 * The letters of a workspace's own keys that mean something else in another workspace. A letter means one thing in
 * every workspace (docs/architecture.md, "Keymap"): where a label's initial was taken, the label got another letter
 * of its word (O committed, P specific, T category, E rationale, W reword, F flag missed text). The one letter left with two words, N (none in
 * judge validation, no in screening and in the review of model steps: the negative answer in each), is said on the cards
 * from this list.
 */
export function letterClashes(id: WorkspaceId): LetterClash[] {
  const meaningsOf = (w: WorkspaceId) =>
    new Map(WORKSPACE_KEYMAPS[w].own.flatMap((b) => Object.entries(b.means ?? {})));
  const here = meaningsOf(id);
  const others = (Object.keys(WORKSPACE_KEYMAPS) as WorkspaceId[]).filter((w) => w !== id);
  const clashes: LetterClash[] = [];
  for (const [key, means] of here) {
    const elsewhere = others.flatMap((w) => {
      const there = meaningsOf(w).get(key);
      return there !== undefined && there !== means
        ? [{ workspace: w, title: WORKSPACE_KEYMAPS[w].title, means: there }]
        : [];
    });
    if (elsewhere.length) clashes.push({ key, here: means, elsewhere });
  }
  return clashes;
}

/** Every key a workspace answers to, in the order its card lists them: its own keys, then the shared ones. */
export function workspaceBindings(id: WorkspaceId): KeyBinding[] {
  const w = WORKSPACE_KEYMAPS[id];
  const common: KeyBinding[] = [];
  if (w.search) common.push({ ...COMMON_KEYS.search, does: w.search });
  common.push({ ...COMMON_KEYS.submitNext, does: w.submitDoes ?? `submit and go to the next ${w.item}` });
  common.push({ ...COMMON_KEYS.next, does: `next ${w.item}, without submitting` });
  if (w.previous) common.push({ ...COMMON_KEYS.previous, does: `previous ${w.item}, without submitting` });
  common.push(COMMON_KEYS.guidelines, COMMON_KEYS.help, COMMON_KEYS.leaveField);
  return [...w.own, ...common];
}

/** The shared meaning of a single key pressed outside a text field, or null when the key is not a shared one. */
export function commonKeyOf(key: string): Exclude<CommonKey, "submitNext" | "leaveField"> | null {
  for (const k of ["next", "previous", "search", "guidelines", "help"] as const)
    if ((COMMON_KEYS[k].keys as readonly string[]).includes(key)) return k;
  return null;
}

/**
 * The event a workspace dispatches on `window` when `?` is pressed (or `openGuidelines` in
 * app/work-items/ui/shortcuts.ts is called); the guidelines panel listens for it:
 * `window.addEventListener(GUIDELINES_EVENT, open)`.
 */
export const GUIDELINES_EVENT = "concord:guidelines";

/** Where the help page lists this keymap. */
export const HELP_PATH = "/help";
