// ESLint flat config: the recommended JavaScript and typescript-eslint rules (syntax only, no type information, so
// the run stays fast), the two React hook rules and the project's own rule `concord/visible-rows` (the tables an import
// writes behind its run are read only through their views). The layer rules live in .dependency-cruiser.cjs; see
// docs/checks.md.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";
import { concordPlugin } from "./eslint/visible-rows.js";

/** node:fs's functions that write, create or move files; `allowed` are left out of the list. */
function fsWrites(allowed) {
  const names = [
    "writeFileSync",
    "writeFile",
    "appendFileSync",
    "appendFile",
    "createWriteStream",
    "writeSync",
    "write",
    "writevSync",
    "writev",
    "renameSync",
    "rename",
    "copyFileSync",
    "copyFile",
    "cpSync",
    "cp",
    "truncateSync",
    "truncate",
    "ftruncateSync",
  ].filter((n) => !allowed.includes(n));
  const message =
    'Write files through app/platform/output-files.server.ts (writeFileAtomic, writeFolderAtomic, …): complete or absent, with the cause named (docs/reliability.md, "Atomic files").';
  return [
    ...["node:fs", "fs"].map((name) => ({ name, importNames: names, message })),
    ...["node:fs/promises", "fs/promises"].map((name) => ({ name, message })),
  ];
}
const LOG_APPENDS = ["writeSync", "appendFileSync", "truncateSync"];
const REFERENCE_CSV = [
  {
    group: ["**/formats/csv-text"],
    importNames: ["formatReferenceCsv", "formatReferenceCsvRecord"],
    message:
      'Only the reference-format files (REFERENCE_FORMAT_CSV_FILES) are written without the formula-safe encoder; use formatCsv (docs/security.md, "Spreadsheet exports").',
  },
];

export default tseslint.config(
  {
    ignores: ["build/**", "node_modules/**", "public/build/**", ".cache/**", "data/**", "runs/**", "bench-results/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      // `_name` marks a parameter or binding that must exist for its position but is not read.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  // One output layer (docs/reliability.md, "Atomic files"): every file the app writes goes through
  // app/platform/output-files.server.ts, so that it is complete or absent and a failure names its cause. The rest of
  // app/ may not import node:fs's write functions. The run logs (app/evaluation/run-folder.ts, app/mc-evaluation/run.ts)
  // append each answer as it arrives so that a kill loses nothing already answered; they may append, nothing else.
  {
    files: ["app/**/*.{ts,tsx}"],
    ignores: ["app/platform/output-files.server.ts"],
    rules: { "no-restricted-imports": ["error", { paths: fsWrites([]), patterns: REFERENCE_CSV }] },
  },
  {
    files: ["app/evaluation/run-folder.ts", "app/mc-evaluation/run.ts"],
    rules: { "no-restricted-imports": ["error", { paths: fsWrites(LOG_APPENDS), patterns: REFERENCE_CSV }] },
  },
  // Every download answers through app/platform/download.server.ts:downloadResponse (made whole before the answer
  // starts, with its length; a full disk is a 507): no other code sets a Content-Disposition.
  {
    files: ["app/**/*.{ts,tsx}"],
    ignores: ["app/platform/download.server.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "Property[key.value=/^content-disposition$/i]",
          message:
            'Answer a download with downloadResponse (app/platform/download.server.ts; docs/reliability.md, "Downloads").',
        },
        // A spread passes every element as an argument on the stack: past about 100,000 it throws RangeError.
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name=/^(max|min)$/] > SpreadElement",
          message:
            'Use maxOf / minOf (app/stats/extremes.ts): a spread over a data-sized list overflows the stack (docs/reliability.md, "Memory bounded by the longest line").',
        },
        {
          selector: "CallExpression[callee.property.name=/^(push|unshift)$/] > SpreadElement",
          message:
            'Use pushAll (app/stats/extremes.ts): a spread over a data-sized list overflows the stack (docs/reliability.md, "Memory bounded by the longest line").',
        },
      ],
    },
  },
  // The reference-format CSVs (app/formats/csv-text.ts, REFERENCE_FORMAT_CSV_FILES) are the only ones written without
  // the formula-safe encoder: only their writers may import the raw writer.
  {
    files: [
      "app/gold/gold-export.server.ts",
      "app/gold/domain/safe-psych-serialize.ts",
      "app/screening/screening-release.server.ts",
    ],
    rules: { "no-restricted-imports": ["error", { paths: fsWrites([]) }] },
  },
  {
    // docs/reliability.md, "Bulk imports": readers in app/ select from the visible_* views (db/schema-visible.ts).
    files: ["app/**/*.{ts,tsx}"],
    plugins: { concord: concordPlugin },
    rules: { "concord/visible-rows": "error" },
  },
);
