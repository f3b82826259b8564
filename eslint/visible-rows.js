// The rule `concord/visible-rows` (docs/checks.md; docs/reliability.md, "Bulk imports"): code in app/ reads the
// tables an import writes behind its run only through their views (`visibleCases` … in db/schema-visible.ts, the SQL
// views `visible_cases` …), which hide the rows of an unfinished import. A query that selects from or joins one of
// these tables — with drizzle (`.from(cases)`, `.leftJoin(cases, …)`, `$count(cases)`, `sql\`… from ${cases}\``) or
// in SQL text (`select … from cases`, `join cases`) — is reported. Writers (insert, update, delete) are not reads;
// the import machinery that must see its own hidden rows says so on the line:
// `// eslint-disable-next-line concord/visible-rows -- <why this read must see hidden rows>`.

/** The drizzle name and the SQL name of every table with rows an import may hide (checked against db/schema-visible.ts). */
export const HIDDEN_CAPABLE_TABLES = {
  studies: "studies",
  cases: "cases",
  events: "events",
  judgeSets: "judge_sets",
  judgeResponseImports: "judge_response_imports",
  judgeResponses: "judge_responses",
  gradingSets: "grading_sets",
  gradingVerdicts: "grading_verdicts",
  mentatBanks: "mentat_banks",
  mentatQuestions: "mentat_questions",
  mentatRatings: "mentat_ratings",
  reviewSets: "review_sets",
  reviewItems: "review_items",
  screeningStudies: "screening_studies",
  screeningItems: "screening_items",
  screeningLabels: "screening_labels",
  screeningRecallTiers: "screening_recall_tiers",
  evaluationImports: "evaluation_imports",
  evaluationRuns: "evaluation_runs",
};

const DRIZZLE_NAMES = new Set(Object.keys(HIDDEN_CAPABLE_TABLES));
const SQL_NAMES = Object.values(HIDDEN_CAPABLE_TABLES);
const QUERY_METHODS = new Set(["from", "innerJoin", "leftJoin", "rightJoin", "fullJoin", "crossJoin", "$count"]);
const SCHEMA_MODULE = /(^|\/)db\/schema(-[a-z]+)?(\.ts)?$/;
/** `from cases`, `JOIN "screening_items"`, not `delete from cases` (a write). */
const SQL_READS = new RegExp(`(?<!\\bdelete\\s+)\\b(from|join)\\s+[\`"']?(${SQL_NAMES.join("|")})\\b`, "gi");
/** The SQL line of a read that must see the hidden rows says why (the SQL counterpart of an eslint-disable comment). */
const ALLOWED = /--\s*reads hidden rows:\s*\S/i;
/** A statement that writes (its subquery picks the rows it removes or changes): not a read. */
const WRITE = /^\s*(delete|update|insert)\b/i;
const ENDS_WITH_FROM = /\b(from|join)\s*["`]?$/i;

const viewName = (table) => `visible${table[0].toUpperCase()}${table.slice(1)}`;

/** @type {import("eslint").Rule.RuleModule} */
export const visibleRows = {
  meta: {
    type: "problem",
    docs: { description: "Read the tables an import writes behind its run only through their visible_* views." },
    schema: [],
    messages: {
      drizzle:
        '`{{name}}` may hold rows of an unfinished import: read `{{view}}` (db/schema-visible.ts) instead (docs/reliability.md, "Bulk imports").',
      sql: 'SQL reading `{{table}}` may see rows of an unfinished import: read `visible_{{table}}` instead (docs/reliability.md, "Bulk imports").',
    },
  },
  create(context) {
    /** Local names bound to a hidden-capable table (its own name, or an alias of its import from db/schema). */
    const tableOf = new Map([...DRIZZLE_NAMES].map((n) => [n, n]));
    /** Local names of `import * as schema from "…/db/schema"`. */
    const namespaces = new Set();

    function baseTable(node) {
      if (!node) return null;
      if (node.type === "Identifier") return tableOf.get(node.name) ?? null;
      if (
        node.type === "MemberExpression" &&
        !node.computed &&
        node.object.type === "Identifier" &&
        namespaces.has(node.object.name) &&
        DRIZZLE_NAMES.has(node.property.name)
      )
        return node.property.name;
      return null;
    }

    function reportDrizzle(node, table) {
      context.report({ node, messageId: "drizzle", data: { name: table, view: viewName(table) } });
    }

    /** Reports every read in SQL text, at its place; a line that says `-- reads hidden rows: <why>` is allowed. */
    function checkText(node, text) {
      if (WRITE.test(text)) return;
      const start = node.range[0] + 1; // after the quote, backtick or closing brace
      for (const m of text.matchAll(SQL_READS)) {
        const lineStart = text.lastIndexOf("\n", m.index) + 1;
        const lineEnd = text.indexOf("\n", m.index);
        if (ALLOWED.test(text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd))) continue;
        const loc = context.sourceCode.getLocFromIndex(start + m.index);
        context.report({ node, loc, messageId: "sql", data: { table: m[2].toLowerCase() } });
      }
    }

    return {
      ImportDeclaration(node) {
        if (!SCHEMA_MODULE.test(String(node.source.value))) return;
        for (const s of node.specifiers) {
          if (s.type === "ImportNamespaceSpecifier") namespaces.add(s.local.name);
          else if (
            s.type === "ImportSpecifier" &&
            s.imported.type === "Identifier" &&
            DRIZZLE_NAMES.has(s.imported.name)
          )
            tableOf.set(s.local.name, s.imported.name);
        }
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier") return;
        if (!QUERY_METHODS.has(callee.property.name)) return;
        const table = baseTable(node.arguments[0]);
        if (table) reportDrizzle(node.arguments[0], table);
      },
      Literal(node) {
        if (typeof node.value === "string") checkText(node, node.value);
      },
      TemplateLiteral(node) {
        if (WRITE.test(node.quasis[0].value.cooked ?? node.quasis[0].value.raw)) return;
        node.quasis.forEach((q) => checkText(q, q.value.cooked ?? q.value.raw));
        node.expressions.forEach((e, i) => {
          const table = baseTable(e);
          if (table && ENDS_WITH_FROM.test(node.quasis[i].value.cooked ?? node.quasis[i].value.raw))
            reportDrizzle(e, table);
        });
      },
    };
  },
};

export const concordPlugin = { meta: { name: "concord" }, rules: { "visible-rows": visibleRows } };
