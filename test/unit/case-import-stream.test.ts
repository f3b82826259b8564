/**
 * The case file read as a stream (docs/reliability.md, "Bulk imports"): whatever the size of the chunks it arrives
 * in, the reader answers exactly what the whole-file reader answered — the same errors in the same order, the same
 * warnings, the same cases. The expected answers (test/fixtures/case-import/expected.json) were produced by
 * test/fixtures/case-import/generate.ts with the whole-file reader (commit 8a73264), over the hostile-file corpus and
 * synthetic files whose trouble is far from their start (see inputs.ts).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CaseFileReader, parseCaseFile, type ParsedCase } from "../../app/annotation/domain/case-import";
import { canonicalChapterVCode } from "../../app/icd10/icd10.server";
import { caseInputs } from "../fixtures/case-import/inputs";

interface Expected {
  name: string;
  format: string;
  hasReferenceLabels: boolean;
  errors: string[];
  warnings: string[];
  cases: number;
  casesSha256: string;
}

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/case-import/expected.json", import.meta.url), "utf8"),
) as Expected[];
const inputs = caseInputs();

function streamed(bytes: Uint8Array, filename: string, chunk: number) {
  const cases: ParsedCase[] = [];
  const reader = new CaseFileReader(
    { filename, canonicalCode: canonicalChapterVCode },
    (c) => cases.push(c),
    bytes.length,
  );
  for (let at = 0; at < bytes.length; at += chunk) {
    reader.write(bytes.subarray(at, at + chunk));
  }
  const r = reader.finish();
  return {
    summary: {
      name: "",
      format: r.format,
      hasReferenceLabels: r.hasReferenceLabels,
      errors: r.errors.map((e) => `${e.line}: ${e.message}`),
      warnings: r.warnings.map((w) => `${w.line}: ${w.message}`),
      cases: r.errors.length ? 0 : cases.length,
      casesSha256: createHash("sha256")
        .update(JSON.stringify(r.errors.length ? [] : cases))
        .digest("hex"),
    },
  };
}

it("covers every input of the fixture", () => {
  expect(inputs.map((i) => i.name)).toEqual(expected.map((e) => e.name));
});

describe.each(inputs.map((input, i) => [input.name, input, expected[i]!] as const))("%s", (_name, input, want) => {
  const sizes = [input.bytes.length || 1, 65_536, 4096, 61, input.bytes.length < 40_000 ? 1 : 13];
  it.each(sizes)("in chunks of %i bytes answers as the whole-file reader did", (size) => {
    const got = streamed(input.bytes, input.filename, size);
    expect({ ...got.summary, name: want.name }).toEqual(want);
  });
});

it("parseCaseFile reads text as it reads the same bytes", () => {
  for (const input of inputs.filter(
    (i) => !/utf8|not-utf|invalid|latin1|utf16|binary|cesu|overlong|truncated/.test(i.name),
  )) {
    const fromBytes = parseCaseFile(input.bytes, { filename: input.filename, canonicalCode: canonicalChapterVCode });
    const fromText = parseCaseFile(new TextDecoder().decode(input.bytes), {
      filename: input.filename,
      canonicalCode: canonicalChapterVCode,
    });
    expect(fromText, input.name).toEqual(fromBytes);
  }
});
