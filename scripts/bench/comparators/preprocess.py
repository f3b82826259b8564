"""Comparator for `npm run bench` (scripts/bench/bulk-import.ts): the work a Python user does to turn a released CSV
into data_gt.json and samples.json, written from the formats in docs/formats.md ("Released CSV", "data_gt.json"),
with the standard library only: csv.DictReader, then json.dump(indent=2, ensure_ascii=False).

Usage: python3 preprocess.py DATA.csv OUT_DIR
"""
import csv
import json
import os
import sys

SECTIONS = ["presenting_symptoms", "psychiatric_history", "psychiatric_exam", "psychological_exam", "secondary_diagnoses"]
LABELS = ["diagnosis_sufficiency", "diagnosis_sufficiency_agreement", "diagnosis", "diagnosis_agreement", "earliest_sufficient_section"]


def main(src, out):
    samples, gt = [], []
    with open(src, encoding="utf-8-sig", newline="") as f:
        for row in csv.DictReader(f):
            meta, present = [], []
            for i, name in enumerate(SECTIONS, start=1):
                text = (row.get(name) or "").strip()
                if text:
                    present.append(text)
                meta.append({"section_name": name, "original_order": i, "present": bool(text),
                             "assigned_order": len(present) if text else None, "content": text})
            samples.append({"sample_id": row["id"].strip(),
                            "sections": [{"order": k + 1, "content": t} for k, t in enumerate(present)]})
            rec = {"id": row["id"].strip(), "age_group": row["age_group"].strip(), "sex": row["sex"].strip()}
            for name in LABELS:
                rec[name] = (row.get(name) or "").strip()
            rec["num_sections_in_input"] = len(present)
            rec["last_section_order"] = len(present)
            rec["sections_metadata"] = meta
            gt.append(rec)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "samples.json"), "w", encoding="utf-8") as f:
        json.dump(samples, f, indent=2, ensure_ascii=False)
    with open(os.path.join(out, "data_gt.json"), "w", encoding="utf-8") as f:
        json.dump(gt, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
