/**
 * Labels and audit-trail changes as an admin reads them: usernames instead of user ids, ICD-10 codes with their
 * titles, missing-information keys with their labels, free text recorded only as "changed" (docs/architecture.md,
 * "Roles and blinding": the trail never copies note text). The raw records stay available as a JSON download.
 */
import { MISSING_INFO } from "../../labels/labels";
import { FREE_TEXT_CHANGED } from "../../work-items/domain/work-item";

/** What the page resolves on the server: user id → username, ICD-10 code → title. */
export interface ReadableNames {
  users: Record<string, string>;
  icd10: Record<string, string>;
}

const MISSING_LABELS: Record<string, string> = Object.fromEntries(MISSING_INFO.map((m) => [m.key, m.label]));

/** "F32.1 — Moderate depressive episode", or the code alone when the table does not know it. */
export function codeWithTitle(code: string | null | undefined, names: ReadableNames): string {
  if (!code) return "—";
  const title = names.icd10[code];
  return title ? `${code} — ${title}` : code;
}

function isLabel(v: unknown): v is Record<string, unknown> & { sufficiency: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && "sufficiency" in v;
}

/** A CaseLabel (or an annotation's values) in one line. */
export function labelText(v: Record<string, unknown>, names: ReadableNames): string {
  if (v.sufficiency === "sufficient")
    return `sufficient · ${codeWithTitle(v.icd10 as string, names)} · earliest section ${v.earliestSection ?? "—"}`;
  if (v.sufficiency === "insufficient") {
    const missing = (v.missingInfo as string[] | undefined) ?? [];
    const other = (v.missingInfoOther ?? v.missingOther) as string | null | undefined;
    const list = missing.map((k) => (k === "other" && other ? `Other: ${other}` : (MISSING_LABELS[k] ?? k)));
    return `insufficient · missing: ${list.join("; ") || "—"}`;
  }
  return "no label";
}

/** One value of an audit change, readable: names for ids, titles for codes, labels in one line. */
export function readableValue(key: string, v: unknown, names: ReadableNames): string {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "string") {
    if (names.users[v]) return names.users[v];
    if (/icd|code|diagnosis/i.test(key) && names.icd10[v]) return codeWithTitle(v, names);
    return v;
  }
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v))
    return v.map((x) => (typeof x === "string" && MISSING_LABELS[x]) || readableValue(key, x, names)).join(", ") || "—";
  if (isLabel(v)) return labelText(v, names);
  return Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}: ${readableValue(k, x, names)}`)
    .join(", ");
}

const isFreeTextMarker = (v: unknown) =>
  Array.isArray(v) && v.length === 2 && v[0] === FREE_TEXT_CHANGED[0] && v[1] === FREE_TEXT_CHANGED[1];

/** An event's changes as a small table: field, before, after (a one-sided entry is shown as its value). */
export function ChangesTable({ changes, names }: { changes: Record<string, unknown>; names: ReadableNames }) {
  const entries = Object.entries(changes);
  if (!entries.length) return <span className="muted">—</span>;
  return (
    <table className="changes">
      <tbody>
        {entries.map(([key, v]) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            {isFreeTextMarker(v) ? (
              <td colSpan={2} className="muted">
                text changed (not recorded)
              </td>
            ) : Array.isArray(v) && v.length === 2 ? (
              <>
                <td>{readableValue(key, v[0], names)}</td>
                <td>→ {readableValue(key, v[1], names)}</td>
              </>
            ) : (
              <td colSpan={2}>{readableValue(key, v, names)}</td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Every string in a value, deeply: the candidates for user ids and ICD-10 codes the server resolves. */
export function stringsIn(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsIn(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) stringsIn(x, out);
  return out;
}
