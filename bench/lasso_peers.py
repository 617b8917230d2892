#!/usr/bin/env python3
"""One case of bench/lasso_vs_peers.sh: schmp-lasso against scikit-learn, celer and skglm.

Every solver minimises (1/2n) ||y - X w||^2 + lambda ||w||_1, no intercept, lambda = ratio * ||X^T y||_inf / n.

- Each peer fits at tolerances 1e-2, 1e-3, ... 1e-10 (a fresh fit each, after a warm-up fit for numba).
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
import csv
import importlib
import json
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

TOLS = [10.0**-k for k in range(2, 11)]
TARGETS = [1e-4, 1e-6, 1e-8]


def objective(X, y, w, lam):
    r = y - X @ w
    return float(r @ r / (2 * X.shape[0]) + lam * np.abs(w).sum())


def make(peer, lam, tol):
    if peer == "sklearn":
        from sklearn.linear_model import Lasso
        return Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1_000_000)
    if peer == "celer":
        from celer import Lasso
        return Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1000, max_epochs=1_000_000)
    from skglm import Lasso
    return Lasso(alpha=lam, fit_intercept=False, tol=tol, max_iter=1000, max_epochs=1_000_000)


def peer_fits(peer, X, y, lam, limit):
    """[tol, seconds, objective] per tolerance, until a fit takes longer than `limit` seconds."""
    fits = []
    for k, tol in enumerate([TOLS[0]] + TOLS):
        model = make(peer, lam, tol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model.fit(X, y)
            seconds = time.perf_counter() - t0
        if k > 0:
            fits.append([tol, seconds, objective(X, y, np.ravel(model.coef_), lam)])
        if seconds > limit:
            break
    return fits


def schmp_run(command, data, ratio, trace, limit):
    t0 = time.perf_counter()
    subprocess.run(command + ["--data", data, "--lambda_ratio", str(ratio), "--tol", "1e-10", "--trace", trace,
                              "--progress_seconds", "0", "--max_seconds", str(limit)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(trace) as f:
        rows = [(float(r["seconds"]), float(r["objective"]), float(r["relative_gap"])) for r in csv.DictReader(f)]
    return wall, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--lambda_ratio", type=float, required=True)
    parser.add_argument("--schmp", required=True, help="the schmp-lasso binary")
    parser.add_argument("--mpirun", default="mpirun --oversubscribe", help="launcher for rank counts above 1")
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--peers", default="sklearn,celer,skglm")
    parser.add_argument("--limit", type=float, default=120, help="seconds allowed to one solve")
    args = parser.parse_args()

    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X = X.tocsc()
    if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
        X = np.asfortranarray(X.toarray())
    lam = args.lambda_ratio * float(np.max(np.abs(X.T @ y))) / X.shape[0]

    runs = {}
    for peer in args.peers.split(","):
        try:
            importlib.import_module(peer)
        except ImportError:
            continue
        runs[peer] = peer_fits(peer, X, y, lam, args.limit)
    schmp = {}
    with tempfile.TemporaryDirectory() as scratch:
        for ranks in [int(r) for r in args.ranks.split(",")]:
            command = ([args.schmp] if ranks == 1 else
                       args.mpirun.split() + ["-np", str(ranks), args.schmp])
            schmp[ranks] = schmp_run(command, args.data, args.lambda_ratio,
                                     os.path.join(scratch, f"np{ranks}.csv"), args.limit)

    best = min([o for fits in runs.values() for _, _, o in fits] +
               [o for _, rows in schmp.values() for _, o, _ in rows])
    result = {"data": os.path.basename(args.data), "lambda_ratio": args.lambda_ratio, "rows": X.shape[0],
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
