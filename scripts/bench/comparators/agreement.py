"""The statistics comparator of `npm run bench` (docs/statistics.md#at-scale): what a user would otherwise run on a
long-format ratings CSV — the csv module to read it, numpy to code and count — computing percent agreement, Cohen's
kappa, Gwet's AC1 with its standard error, Fleiss' kappa and nominal Krippendorff's alpha. Written for the benchmark
(no pandas or sklearn on this machine); prints the figures as JSON so the bench can check both sides agree.

Usage: python3 agreement.py RATINGS.csv
"""
import csv
import json
import sys

import numpy as np


def main(path):
    items, raters, labels = {}, {}, {}
    codes = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = [h.strip().lower() for h in next(reader)]
        ii, ri, li = header.index("item"), header.index("rater"), header.index("label")
        for row in reader:
            if not row:
                continue
            label = row[li].strip()
            if label == "":
                continue
            item = items.setdefault(row[ii].strip(), len(items))
            rater = raters.setdefault(row[ri].strip(), len(raters))
            codes.append((item, rater, labels.setdefault(label, len(labels))))
    a = np.array(codes, dtype=np.int64)
    n, q = len(items), len(labels)
    # r_ik: ratings of item i in category k.
    counts = np.zeros((n, q))
    np.add.at(counts, (a[:, 0], a[:, 2]), 1)
    r = counts.sum(axis=1)
    pairable = r >= 2
    agree_i = np.where(pairable, (counts * (counts - 1)).sum(axis=1) / np.maximum(r * (r - 1), 1), 0)
    pa = agree_i[pairable].mean()
    prevalence = (counts / r[:, None]).mean(axis=0)
    # Gwet's AC1 and its linearised variance.
    pe = (prevalence * (1 - prevalence)).sum() / (q - 1)
    ac1 = (pa - pe) / (1 - pe)
    chance_i = (counts * ((1 - prevalence) / (q - 1))[None, :]).sum(axis=1) / r
    scale = n / pairable.sum()
    v = scale * (agree_i - np.where(pairable, pe, 0)) / (1 - pe) - 2 * (1 - ac1) * (chance_i - pe) / (1 - pe)
    se = float(np.sqrt(((v - ac1) ** 2).sum() / (n * (n - 1))))
    # Fleiss' kappa.
    pe_f = (prevalence**2).sum()
    fleiss = (pa - pe_f) / (1 - pe_f)
    # Cohen's kappa on items rated by both of the first two raters.
    both = np.full((n, 2), -1)
    for j in range(2):
        sel = a[:, 1] == j
        both[a[sel, 0], j] = a[sel, 2]
    ok = (both >= 0).all(axis=1)
    table = np.zeros((q, q))
    np.add.at(table, (both[ok, 0], both[ok, 1]), 1)
    table /= table.sum()
    po = np.trace(table)
    pe_c = (table.sum(axis=1) * table.sum(axis=0)).sum()
    kappa = (po - pe_c) / (1 - pe_c)
    # Krippendorff's alpha, nominal: the coincidence matrix of pairable items.
    m = counts[pairable]
    coincidence = (m[:, :, None] * m[:, None, :] - np.einsum("ik,kl->ikl", m, np.eye(q))) / (m.sum(axis=1) - 1)[:, None, None]
    o = coincidence.sum(axis=0)
    nk = o.sum(axis=1)
    total = nk.sum()
    do = total - np.trace(o)
    de = (total * total - (nk * nk).sum()) / (total - 1)
    alpha = 1 - do / de
    print(json.dumps({"n_items": n, "percent_agreement": float(pa), "cohen_kappa": float(kappa), "gwet_ac1": float(ac1),
                      "gwet_ac1_se": se, "fleiss_kappa": float(fleiss), "krippendorff_alpha": float(alpha)}))


if __name__ == "__main__":
    main(sys.argv[1])
