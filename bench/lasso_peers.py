#!/usr/bin/env python3
"""One case of bench/lasso_vs_peers.sh: schmp-lasso against scikit-learn, celer and skglm.

Every solver minimises (1/2n) ||y - X w||^2 + lambda ||w||_1, no intercept, lambda = ratio * ||X^T y||_inf / n.
With --intercept: (1/2n) ||y - X w - b||^2 + lambda ||w||_1, lambda = ratio * ||X^T (y - mean y)||_inf / n; a
peer's objective is taken at the best b for its w.

- Each peer fits at tolerances 1e-2, 1e-3, ... 1e-10 (a fresh fit each, after a warm-up fit for numba),
  each in a forked child stopped after --limit seconds (bench/peer_timing.py).
  Its time to a target objective is the fit time of its loosest tolerance that reaches the target: the
  peer at its best setting for that target.
- schmp-lasso runs once per rank count to --tol 1e-10 with a trace. Its time to a target is the trace's
  solve seconds at the first row that reaches it; its time to stop at --tol T is read the same way from
  the first row whose relative gap is at most T.
- The optimum is the lowest objective any solver reached. Targets are relative suboptimalities.

Prints one JSON object: per solver the seconds to each target, and the whole-process seconds of
schmp's runs. Peers that are not installed are left out.
"""

import argparse
import importlib
import json
import os
import tempfile

import numpy as np
from sklearn.datasets import load_svmlight_file

from peer_timing import peer_fits, schmp_command, schmp_run

TARGETS = [1e-4, 1e-6, 1e-8]


def objective(X, y, w, lam, intercept):
    r = y - X @ w
    if intercept:
        r = r - r.mean()
    return float(r @ r / (2 * X.shape[0]) + lam * np.abs(w).sum())


def make(peer, lam, tol, intercept):
    if peer == "sklearn":
        from sklearn.linear_model import Lasso
        return Lasso(alpha=lam, fit_intercept=intercept, tol=tol, max_iter=1_000_000)
    if peer == "celer":
        from celer import Lasso
        return Lasso(alpha=lam, fit_intercept=intercept, tol=tol, max_iter=1000, max_epochs=1_000_000)
    from skglm import Lasso
    return Lasso(alpha=lam, fit_intercept=intercept, tol=tol, max_iter=1000, max_epochs=1_000_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--lambda_ratio", type=float, required=True)
    parser.add_argument("--schmp", required=True, help="the schmp-lasso binary")
    parser.add_argument("--mpirun", default="mpirun --oversubscribe", help="launcher for rank counts above 1")
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--peers", default="sklearn,celer,skglm")
    parser.add_argument("--limit", type=float, default=120, help="seconds allowed to one solve")
    parser.add_argument("--intercept", action="store_true", help="fit an unpenalised intercept")
    args = parser.parse_args()

    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X = X.tocsc()
    if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
        X = np.asfortranarray(X.toarray())
    lam = args.lambda_ratio * float(np.max(np.abs(X.T @ (y - y.mean() if args.intercept else y)))) / X.shape[0]

    runs = {}
    for peer in args.peers.split(","):
        try:
            importlib.import_module(peer)
        except ImportError:
            continue
        runs[peer] = peer_fits(lambda tol: make(peer, lam, tol, args.intercept), X, y,
                               lambda coef: objective(X, y, coef, lam, args.intercept), args.limit)
    schmp = {}
    with tempfile.TemporaryDirectory() as scratch:
        for ranks in [int(r) for r in args.ranks.split(",")]:
            flags = ["--data", args.data, "--lambda_ratio", str(args.lambda_ratio), "--tol", "1e-10",
                     f"--fit_intercept={'true' if args.intercept else 'false'}"]
            schmp[ranks] = schmp_run(schmp_command(args.schmp, args.mpirun, ranks), flags,
                                     os.path.join(scratch, f"np{ranks}.csv"), args.limit)

    best = min([o for fits in runs.values() for _, _, o in fits] +
               [o for _, rows in schmp.values() for _, o, _ in rows])
    result = {"data": os.path.basename(args.data), "lambda_ratio": args.lambda_ratio, "intercept": args.intercept,
              "rows": X.shape[0],
              "cols": X.shape[1], "optimum": best, "peers": {}, "schmp": {}}
    for peer, fits in runs.items():
        result["peers"][peer] = {
            str(t): next((s for _, s, o in fits if o <= best * (1 + t)), None) for t in TARGETS}
    for ranks, (wall, rows) in schmp.items():
        entry = {str(t): next((s for s, o, _ in rows if o <= best * (1 + t)), None) for t in TARGETS}
        entry["stop_1e-7"] = next((s for s, _, g in rows if g <= 1e-7), None)
        entry["wall_to_1e-10"] = wall
        result["schmp"][str(ranks)] = entry
    print(json.dumps(result))


if __name__ == "__main__":
    main()
