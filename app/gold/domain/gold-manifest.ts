/**
 * The A/B order seed read back from a gold export's `manifest.json` (docs/safe-psych.md, "Annotator A and B"):
 * `import-gold` stores it on the study so that a restored study draws every case's "Annotator A/B" order as the
 * original did. Pure: the caller reads the file.
 */
import { MAX_ANNOTATOR_ORDER_SEED } from "../../adjudication/public";
import { LineCounter } from "../../formats/lines";

export type ManifestSeed =
  /** `seed` null: no seed to restore (an older export, or a study whose A/B order was never drawn); `notice` says which. */
  | { ok: true; seed: number | null; notice: string | null; line: number; dataGtSha256: string | null }
  | { ok: false; error: string };

const SEED_KEY = /"annotator_order_seed"\s*:/;

/**
 * Reads `annotator_order_seed` from a manifest's text. A seed must be a whole number from 1 to 2^31 − 1 (what
 * export-gold writes) or null; anything else is refused as `FILE:LINE: reason`.
 *
 * @example readManifestSeed('{"annotator_order_seed": 7}', "manifest.json") // { ok: true, seed: 7, line: 1, … }
 */
export function readManifestSeed(text: string, filename: string): ManifestSeed {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    const at = /position (\d+)/.exec((e as Error).message);
    const line = at ? LineCounter.ofText(text).lineAt(Number(at[1])) : 1;
    return {
      ok: false,
      error: `${filename}:${line}: not valid JSON (${(e as Error).message.replace(/ in JSON at position \d+.*$/, "")}). Give export-gold's manifest.json as written, or remove it to import without the A/B order seed.`,
    };
  }
  if (typeof manifest !== "object" || manifest === null || Array.isArray(manifest))
    return { ok: false, error: `${filename}:1: a manifest is a JSON object; this is not export-gold's manifest.json.` };
  const m = manifest as Record<string, unknown>;
  const files = m.files as Record<string, { sha256?: unknown }> | undefined;
  const sha = files?.["data_gt.json"]?.sha256;
  const dataGtSha256 = typeof sha === "string" ? sha : null;
  const match = SEED_KEY.exec(text);
  const line = match ? LineCounter.ofText(text).lineAt(match.index) : 1;
  if (!("annotator_order_seed" in m))
    return {
      ok: true,
      seed: null,
      line,
      dataGtSha256,
      notice: `${filename}: no annotator_order_seed (an export made before the seed was recorded): the study's A/B order will be drawn from a new seed.`,
    };
  const seed = m.annotator_order_seed;
  if (seed === null)
    return {
      ok: true,
      seed: null,
      line,
      dataGtSha256,
      notice: `${filename}:${line}: annotator_order_seed is null (the exported study never drew an A/B order): the study's A/B order will be drawn from a new seed.`,
    };
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 1 || seed > MAX_ANNOTATOR_ORDER_SEED)
    return {
      ok: false,
      error: `${filename}:${line}: annotator_order_seed must be a whole number from 1 to ${MAX_ANNOTATOR_ORDER_SEED} or null; got ${JSON.stringify(seed)}. Restore the value export-gold wrote, or set it to null to draw a new A/B order.`,
    };
  return { ok: true, seed, line, dataGtSha256, notice: null };
}
