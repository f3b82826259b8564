// ESLint flat config: the recommended JavaScript and typescript-eslint rules (syntax only, no type information, so
// the run stays fast), the two React hook rules and the project's own rule `concord/visible-rows` (the tables an import
// writes behind its run are read only through their views). The layer rules live in .dependency-cruiser.cjs; see
// docs/checks.md.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";
import { concordPlugin } from "./eslint/visible-rows.js";

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
  {
    // docs/reliability.md, "Bulk imports": readers in app/ select from the visible_* views (db/schema-visible.ts).
    files: ["app/**/*.{ts,tsx}"],
    plugins: { concord: concordPlugin },
    rules: { "concord/visible-rows": "error" },
  },
);
