#!/usr/bin/env python3
"""One case of bench/logreg_vs_peers.sh: schmp-logreg against liblinear, celer and skglm.

Every solver minimises liblinear's L1 logistic regression (-s 6), no intercept:

    C sum_i log(1 + exp(-y_i x_i . w)) + ||w||_1

Labels above 0 are +1 and the others -1, as schmp-logreg reads a file labelled +1/-1 or 1/0.

- liblinear is scikit-learn's LogisticRegression(solver='liblinear') with the L1 penalty (its copy of
  liblinear). celer's LogisticRegression minimises the loss + ||w||_1 / C: the same minimiser. skglm's
  SparseLogisticRegression minimises the mean loss + alpha ||w||_1: alpha = 1 / (C n) gives the same
  minimiser. Every objective below is computed here, from the fitted w, in liblinear's scaling.
- Each peer fits at tolerances 1e-2, 1e-3, ... 1e-10 (a fresh fit each, after a warm-up fit for numba),
  each in a forked child stopped after --limit seconds.
  Its time to a target objective is the fit time of its loosest tolerance that reaches the target: the
  peer at its best setting for that target.
- schmp-logreg runs once per rank count to --tol 1e-9 with a trace. Its time to a target is the trace's
  solve seconds at the first row that reaches it. It runs once more per rank count at --tol 1e-4, its
  default: the trace's last solve seconds are its time to stop there.
- The optimum is the lowest objective any solver reached. Targets are relative suboptimalities.

Prints one JSON object: per solver the seconds to each target and the relative suboptimality of its
best run, and the whole-process seconds of schmp's runs. Peers that are not installed are left out.
"""

import argparse
import importlib
import inspect
import json
import os
import tempfile

import numpy as np
from sklearn.datasets import load_svmlight_file

from peer_timing import peer_fits, schmp_command, schmp_run

TARGETS = [1e-4, 1e-6]
PEERS = {"liblinear": "sklearn", "celer": "celer", "skglm": "skglm"}  # peer: the module it needs


def objective(X, y, w, C):
    return float(C * np.logaddexp(0.0, -y * (X @ w)).sum() + np.abs(w).sum())


def make(peer, C, n, tol):
    if peer == "liblinear":
        from sklearn.linear_model import LogisticRegression
        common = dict(C=C, solver="liblinear", fit_intercept=False, tol=tol, max_iter=1000)
        # Newer scikit-learn deprecates penalty=; there l1_ratio=1 is the L1 penalty.
        if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
            return LogisticRegression(l1_ratio=1.0, **common)
        return LogisticRegression(penalty="l1", **common)
    if peer == "celer":
        from celer import LogisticRegression
        return LogisticRegression(C=C, fit_intercept=False, tol=tol, max_iter=1000, max_epochs=1_000_000)
    from skglm import SparseLogisticRegression
    return SparseLogisticRegression(alpha=1.0 / (C * n), fit_intercept=False, tol=tol, max_iter=1000,
                                    max_epochs=1_000_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="LIBSVM file, labels +1/-1 or 1/0")
    parser.add_argument("--C", type=float, required=True)
    parser.add_argument("--schmp", required=True, help="the schmp-logreg binary")
    parser.add_argument("--mpirun", default="mpirun --oversubscribe", help="launcher for rank counts above 1")
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--peers", default="liblinear,celer,skglm")
    parser.add_argument("--limit", type=float, default=120, help="seconds allowed to one solve")
    args = parser.parse_args()

    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X.indices = X.indices.astype(np.int32)  # scikit-learn refuses int64 indices
    X.indptr = X.indptr.astype(np.int32)
    y = np.where(y > 0, 1.0, -1.0)
    # liblinear takes rows (it copies them into its own sparse rows); celer and skglm take columns, or a
    # dense Fortran array when most entries are nonzeros.
    X_cols = X.tocsc()
    X_cols.indices = X_cols.indices.astype(np.int32)
    X_cols.indptr = X_cols.indptr.astype(np.int32)
    if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
        X_cols = np.asfortranarray(X.toarray())

    runs = {}
    for peer in args.peers.split(","):
        try:
            importlib.import_module(PEERS[peer])
        except ImportError:
            continue
        runs[peer] = peer_fits(lambda tol: make(peer, args.C, X.shape[0], tol), X if peer == "liblinear" else X_cols,
                               y, lambda coef: objective(X, y, coef, args.C), args.limit)
    schmp, stops = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for ranks in [int(r) for r in args.ranks.split(",")]:
            command = schmp_command(args.schmp, args.mpirun, ranks)
            # The peers fit no intercept here (make()).
            flags = ["--data", args.data, "--C", str(args.C), "--penalty", "l1", "--fit_intercept=false",
                     "--max_rounds", "1000000000"]
            schmp[ranks] = schmp_run(command, flags + ["--tol", "1e-9"], os.path.join(scratch, f"np{ranks}.csv"),
                                     args.limit)
            stops[ranks] = schmp_run(command, flags + ["--tol", "1e-4"],
                                     os.path.join(scratch, f"np{ranks}_stop.csv"), args.limit)

    best = min([o for fits in runs.values() for _, _, o in fits] +
               [o for _, rows in list(schmp.values()) + list(stops.values()) for _, o, _ in rows])

    def subopt(o):
        return (o - best) / best

    result = {"data": os.path.basename(args.data), "C": args.C, "rows": X.shape[0], "cols": X.shape[1],
              "optimum": best, "peers": {}, "schmp": {}}
    for peer, fits in runs.items():
        entry = {str(t): next((s for _, s, o in fits if o <= best * (1 + t)), None) for t in TARGETS}
        entry["suboptimality"] = subopt(min(o for _, _, o in fits))
        result["peers"][peer] = entry
    for ranks, (wall, rows) in schmp.items():
        entry = {str(t): next((s for s, o, _ in rows if o <= best * (1 + t)), None) for t in TARGETS}
        entry["suboptimality"] = subopt(min(o for _, o, _ in rows))
        entry["wall_to_1e-9"] = wall
        stop_wall, stop_rows = stops[ranks]
        entry["stop_1e-4"] = stop_rows[-1][0]
        entry["stop_1e-4_gap"] = stop_rows[-1][2]
        entry["stop_1e-4_suboptimality"] = subopt(stop_rows[-1][1])
        entry["wall_stop_1e-4"] = stop_wall
        result["schmp"][str(ranks)] = entry
    print(json.dumps(result))


if __name__ == "__main__":
    main()
