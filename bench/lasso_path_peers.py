#!/usr/bin/env python3
"""One case of bench/lasso_path_vs_peers.sh: a regularisation path, schmp-lasso against scikit-learn's
lasso_path, celer's celer_path, skglm (warm-started Lasso fits) and, where R has it, glmnet (its thresh
as the tolerance; fdev = 0, so that it solves every lambda), same data, same lambdas.

Every solver minimises (1/2n) ||y - X w||^2 + lambda ||w||_1, no intercept, at glmnet's lambdas: --count of
them from lambda_max = ||X^T y||_inf / n down to --min_ratio times it.

- Each solver runs the whole path at tolerances 1e-2, 1e-3, ... 1e-10 (schmp: --tol), a fresh run each
  in a forked child stopped after --limit seconds. A peer's time is its path function's; schmp's is
  the solve's, from its path table (as the peers', it leaves out loading the data).
- The optimum at each lambda is the lowest objective any run reached there. A run's path reaches a
  target when every lambda's relative suboptimality is at most it; a solver's time to the target is
  the time of its loosest tolerance that reaches it.

Prints one JSON object: per solver the seconds to each target. Peers that are not installed are left out.
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

from peer_timing import TOLS, run_within

TARGETS = [1e-4, 1e-6]


def objectives(X, y, coefs, lambdas):
    n = X.shape[0]
    values = []
    for w, lam in zip(coefs, lambdas):
        r = y - X @ w
        values.append(float(r @ r / (2 * n) + lam * np.abs(w).sum()))
    return values


def peer_path(peer, X, y, lambdas, tol):
    """Seconds and the coefficients at each lambda of one peer's path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if peer == "sklearn":
            from sklearn.linear_model import lasso_path
            _, coefs, _ = lasso_path(X, y, alphas=lambdas, tol=tol, max_iter=1_000_000)
            coefs = list(coefs.T)
        elif peer == "celer":
            from celer import celer_path
            _, coefs, _ = celer_path(X, y, "lasso", alphas=lambdas, tol=tol, max_iter=1000, max_epochs=1_000_000)
            coefs = list(coefs.T)
        else:
            from skglm import Lasso
            model = Lasso(alpha=lambdas[0], fit_intercept=False, tol=tol, warm_start=True, max_iter=1000,
                          max_epochs=1_000_000)
            coefs = []
            for lam in lambdas:
                model.alpha = lam
                model.fit(X, y)
                coefs.append(np.ravel(model.coef_).copy())
        return time.perf_counter() - t0, coefs


GLMNET_PATH = r"""
suppressMessages(library(glmnet)); suppressMessages(library(Matrix))
a <- commandArgs(TRUE)
x <- as(readMM(a[1]), "CsparseMatrix"); if (a[7] == "dense") x <- as.matrix(x)
y <- scan(a[2], quiet=TRUE); lambda <- scan(a[3], quiet=TRUE); limit <- as.numeric(a[5])
glmnet.control(fdev=0)
for (thresh in scan(a[4], quiet=TRUE)) {
  t <- system.time(fit <- glmnet(x, y, lambda=lambda, intercept=FALSE, standardize=FALSE, thresh=thresh,
                                 maxit=1e8))[["elapsed"]]
  b <- summary(fit$beta)
  write.table(cbind(b$i, b$j, b$x), file=file.path(a[6], paste0(thresh, ".txt")), row.names=FALSE,
              col.names=FALSE)
  cat(thresh, t, "\n")
  if (t > limit) break
}
"""


def glmnet_paths(X, y, lambdas, limit, scratch):
    """[(seconds, coefficients at each lambda)] by tolerance of TOLS, glmnet's fit times; empty without
    R's glmnet."""
    if shutil.which("Rscript") is None:
        return []
    from scipy.io import mmwrite
    import scipy.sparse as sparse
    paths = [os.path.join(scratch, name) for name in ("x.mtx", "y.txt", "lambdas.txt", "tols.txt", "path.R")]
    mmwrite(paths[0], sparse.csc_matrix(X))
    np.savetxt(paths[1], y)
    np.savetxt(paths[2], lambdas)
    np.savetxt(paths[3], TOLS)
    with open(paths[4], "w") as script:
        script.write(GLMNET_PATH)
    dense = "dense" if isinstance(X, np.ndarray) else "sparse"
    done = subprocess.run(["Rscript", paths[4]] + paths[:4] + [str(limit), scratch, dense], capture_output=True,
                          text=True)
    fits = []
    for line in done.stdout.split("\n"):
        if not line.strip():
            continue
        thresh, seconds = line.split()
        coefs = [np.zeros(X.shape[1]) for _ in lambdas]
        for row in np.atleast_2d(np.loadtxt(os.path.join(scratch, thresh + ".txt"), ndmin=2)):
            coefs[int(row[1]) - 1][int(row[0]) - 1] = row[2]
        fits.append((float(seconds), coefs))
    return fits


def schmp_path(command, data, count, min_ratio, tol, scratch):
    """The solve's seconds and the coefficients at each lambda of schmp-lasso's path."""
    models, table = os.path.join(scratch, "path.model"), os.path.join(scratch, "path.csv")
    subprocess.run(command + ["--data", data, "--path", str(count), "--lambda_min_ratio", str(min_ratio),
                              "--tol", str(tol), "--fit_intercept=false", "--output", models,
                              "--path_table", table, "--progress_seconds", "0"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = float(open(table).read().split("\n")[-2].split(",")[5])
    coefs, features = [], 0
    for line in open(models):
        if line.startswith("# features "):
            features = int(line.split()[2])
        elif line.startswith("lambda "):
            coefs.append(np.zeros(features))
        elif line[0] != "#" and not line.startswith("intercept "):
            j, value = line.split()
            coefs[-1][int(j) - 1] = float(value)
    return seconds, coefs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--schmp", required=True, help="the schmp-lasso binary")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--min_ratio", type=float, default=0.01)
    parser.add_argument("--peers", default="sklearn,celer,skglm,glmnet")
    parser.add_argument("--limit", type=float, default=120, help="seconds allowed to one path")
    args = parser.parse_args()

    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X = X.tocsc()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
        X = np.asfortranarray(X.toarray())
    lam_max = float(np.max(np.abs(X.T @ y))) / X.shape[0]
    lambdas = lam_max * args.min_ratio ** (np.arange(args.count) / (args.count - 1))

    runs = {}  # solver -> [(seconds, objectives)] by tolerance, loosest first
    for peer in args.peers.split(","):
        if peer == "glmnet":
            continue
        try:
            importlib.import_module(peer)
        except ImportError:
            continue
        peer_path(peer, X, y, lambdas[:2], 1e-2)  # warm-up (numba compiles), inherited by the forks
        runs[peer] = []
        for tol in TOLS:
            result = run_within(args.limit, lambda: peer_path(peer, X, y, lambdas, tol))
            if result is None:
                break
            runs[peer].append((result[0], objectives(X, y, result[1], lambdas)))
    runs["schmp"] = []
    with tempfile.TemporaryDirectory() as scratch:
        if "glmnet" in args.peers.split(","):
            runs["glmnet"] = [(seconds, objectives(X, y, coefs, lambdas))
                              for seconds, coefs in glmnet_paths(X, y, lambdas, args.limit, scratch)]
        for tol in TOLS:
            result = run_within(args.limit, lambda: schmp_path([args.schmp], args.data, args.count, args.min_ratio,
                                                           tol, scratch))
            if result is None:
                break
            runs["schmp"].append((result[0], objectives(X, y, result[1], lambdas)))
    best = np.min([values for fits in runs.values() for _, values in fits], axis=0)
    result = {"data": os.path.basename(args.data), "count": args.count, "min_ratio": args.min_ratio,
              "rows": X.shape[0], "cols": X.shape[1], "solvers": {}}
    for solver, fits in runs.items():
        result["solvers"][solver] = {
            str(t): next((s for s, values in fits if np.max((np.array(values) - best) / best) <= t), None)
            for t in TARGETS}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
