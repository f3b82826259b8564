import { describe, expect, it } from "vitest";
import { pySplitLines } from "../../app/python-compat/text";
import { pyFloatRepr } from "../../app/python-compat/float";
import { jsonDumps as pyJsonDumps } from "../../app/python-compat/json";
import {
  buildTimingSummary,
  checkModelKey,
  isRunFolderOf,
  modelKeyFromName,
  readJsonLines,
  runFolderName,
  serializeTiming,
  trajectoryLine,
} from "../../app/evaluation/domain/runner-records";

describe("Python-compatible JSON (the reference writes json.dumps(…, ensure_ascii=False))", () => {
  it("writes floats as Python's repr does", () => {
    // python3 -c "print([repr(v) for v in [0.7, 0.95, 1.0, 12.0, 0.0001, 0.00001, 1e16, 1.5e16, 123456789.123,
    //   0.1+0.2, 1e-7, 2.5e-5, -0.5, 1e22, 5e-324, 0.24767011800000001]])"
    const values = [
      0.7,
      0.95,
      1.0,
      12.0,
      0.0001,
      0.00001,
      1e16,
      1.5e16,
      123456789.123,
      0.1 + 0.2,
      1e-7,
      2.5e-5,
      -0.5,
      1e22,
      5e-324,
      // eslint-disable-next-line no-loss-of-precision -- the literal as Python prints it; the test is that it round-trips
      0.24767011800000001,
    ];
    expect(values.map(pyFloatRepr)).toEqual([
      "0.7",
      "0.95",
      "1.0",
      "12.0",
      "0.0001",
      "1e-05",
      "1e+16",
      "1.5e+16",
      "123456789.123",
      "0.30000000000000004",
      "1e-07",
      "2.5e-05",
      "-0.5",
      "1e+22",
      "5e-324",
      "0.24767011800000002",
    ]);
  });

  it("writes one line with Python's separators, raw non-ASCII and JSON's escapes", () => {
    // python3 -c 'import json; print(json.dumps({"sample_id": "c1", "x": "é — \"q\" \\ \t\n\x01 \x7f", "t": 0.7,
    //   "n": None, "b": True, "l": [], "o": {}, "arr": [1, 2.5]}, ensure_ascii=False))'
    const value = {
      sample_id: "c1",
      x: 'é — "q" \\ \t\n\x01 \x7f',
      t: 0.7,
      n: null,
      b: true,
      l: [],
      o: {},
      arr: [1, 2.5],
    };
    expect(pyJsonDumps(value)).toBe(
      '{"sample_id": "c1", "x": "é — \\"q\\" \\\\ \\t\\n\\u0001 \x7f", "t": 0.7, "n": null, "b": true, "l": [], "o": {}, "arr": [1, 2.5]}',
    );
  });

  it("writes indent=2 as Python does, integers under float keys as floats", () => {
    // python3 -c 'import json; print(json.dumps({"a": [{"b": 1.0, "c": "x"}], "d": {}}, indent=2))'
    expect(pyJsonDumps({ a: [{ b: 1, c: "x" }], d: {} }, { indent: 2, floatKeys: new Set(["b"]) })).toBe(
      '{\n  "a": [\n    {\n      "b": 1.0,\n      "c": "x"\n    }\n  ],\n  "d": {}\n}',
    );
  });

  it("escapes U+0085, U+2028 and U+2029, where Python's splitlines() would cut a record", () => {
    const line = trajectoryLine({
      sample_id: "c1",
      model_output_raw: "a\u2028b\u2029c\u0085d\x1ce",
      model_temperature: 1,
    });
    expect(line).toBe(
      '{"sample_id": "c1", "model_output_raw": "a\\u2028b\\u2029c\\u0085d\\u001ce", "model_temperature": 1.0}\n',
    );
    expect(pySplitLines(line)).toHaveLength(1);
    expect(JSON.parse(line).model_output_raw).toBe("a\u2028b\u2029c\u0085d\x1ce");
  });
});

describe("timing.json (docs/formats.md#timingjson)", () => {
  it("has the reference's keys, average 0.0 for no samples, floats as Python writes them", () => {
    const t = buildTimingSummary(12, 3, [{ sample_id: "a", seconds: 2 }]);
    expect(t).toEqual({
      total_time_seconds: 12,
      num_samples: 3,
      avg_time_per_sample_seconds: 4,
      sample_times: [{ sample_id: "a", seconds: 2 }],
    });
    expect(serializeTiming(t)).toBe(
      '{\n  "total_time_seconds": 12.0,\n  "num_samples": 3,\n  "avg_time_per_sample_seconds": 4.0,\n' +
        '  "sample_times": [\n    {\n      "sample_id": "a",\n      "seconds": 2.0\n    }\n  ]\n}',
    );
    expect(buildTimingSummary(0, 0, []).avg_time_per_sample_seconds).toBe(0);
  });
});

describe("run folders (docs/formats.md#run-folders)", () => {
  it("are named <model>_<strategy>_judge-<judge>_seed-<seed>_<YYYYMMDD>_<HHMMSS> in local time", () => {
    const name = runFolderName(
      "gemma-3-4b",
      "sequential_info_neutral_prompting",
      "gemma-3-27b",
      42,
      new Date(2026, 0, 2, 3, 4, 5),
    );
    expect(name).toBe("gemma-3-4b_sequential_info_neutral_prompting_judge-gemma-3-27b_seed-42_20260102_030405");
    expect(isRunFolderOf(name, "gemma-3-4b_sequential_info_neutral_prompting_judge-gemma-3-27b_seed-42")).toBe(true);
    expect(isRunFolderOf(name, "gemma-3-4b_sequential_info_neutral_prompting_judge-gemma-3-27b_seed-4")).toBe(false);
    // What the scripts read from it: the model before _<strategy>, the seed from _seed-<digits>_.
    expect(name.split("_sequential_info_neutral_prompting")[0]).toBe("gemma-3-4b");
    expect(/_seed-(\d+)(?:_|$)/.exec(name)?.[1]).toBe("42");
  });

  it("need model keys that the scripts can split on", () => {
    expect(checkModelKey("qwen_3-32b")).toBeNull();
    expect(checkModelKey("mistral-small-3.1-24B")).toBeNull();
    expect(checkModelKey("")).toMatch(/empty/);
    expect(checkModelKey("a/b")).toMatch(/may only hold/);
    expect(checkModelKey("x_full_info_abstention_aware")).toMatch(/strategy name/);
    expect(checkModelKey("x_seed-1")).toMatch(/_seed-/);
    expect(modelKeyFromName("meta-llama/Llama-3.1-8B-Instruct")).toBe("meta-llama-Llama-3.1-8B-Instruct");
    expect(modelKeyFromName("qwen3:8b")).toBe("qwen3-8b");
  });
});

describe("JSON Lines after a kill", () => {
  it("reads complete lines and reports a torn last line", () => {
    const text = '{"a": 1}\n{"b": 2}\n{"c": 3, "d": [1, 2';
    const r = readJsonLines(text);
    expect(r.values).toEqual([{ a: 1 }, { b: 2 }]);
    expect(r.tornTail).toBe('{"c": 3, "d": [1, 2');
    expect(r.validBytes).toBe(18);
    expect(r.missingNewline).toBe(false);
    expect(r.badLines).toEqual([]);
  });

  it("keeps a last record whose newline is missing", () => {
    const r = readJsonLines('{"a": "é"}\n{"b": 2}');
    expect(r.values).toEqual([{ a: "é" }, { b: 2 }]);
    expect(r.missingNewline).toBe(true);
    expect(r.validBytes).toBe(Buffer.byteLength('{"a": "é"}\n{"b": 2}'));
  });

  it("reports a damaged line in the middle", () => {
    const r = readJsonLines('{"a": 1}\nnot json\n{"b": 2}\n');
    expect(r.badLines).toEqual([2]);
    expect(r.values).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it("handles an empty file", () => {
    expect(readJsonLines("")).toEqual({ values: [], validBytes: 0, tornTail: "", missingNewline: false, badLines: [] });
  });
});
