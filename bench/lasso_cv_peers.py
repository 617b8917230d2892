#!/usr/bin/env python3
"""One case of bench/lasso_cv_vs_peers.sh: 5-fold cross-validation of a Lasso path with an intercept,
schmp-lasso --cv against scikit-learn's LassoCV and (where R has it) glmnet's cv.glmnet, with the same
folds and the same lambdas.

- schmp runs first: `--cv K --path N --lambda_min_ratio R --seed 1`, its folds as the manual specifies
  them. Its time is the whole command's, start-up and reading the data included.
- LassoCV gets schmp's lambdas and folds (PredefinedSplit) and its default tolerance; its time is fit()'s.
- cv.glmnet gets the same lambdas and foldid, standardize=FALSE, its default threshold; its time is the
  call's, the data already read.

Prints one JSON object: each solver's seconds and lambda_min, and the lambdas' index.
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

MASK = (1 << 64) - 1


def folds_of_rows(rows, folds, seed):
    """schmp's folds: labels in turn, shuffled by Fisher-Yates with a SplitMix64 stream."""
    fold = [i % folds for i in range(rows)]
    state = seed
    for i in range(rows, 1, -1):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        j = (z ^ (z >> 31)) % i
        fold[i - 1], fold[j] = fold[j], fold[i - 1]
    return np.array(fold)


def run_schmp(args, table):
    command = args.launcher.split() + [args.schmp, "--data", args.data, "--cv", str(args.folds), "--path",
                                       str(args.count), "--lambda_min_ratio", str(args.min_ratio), "--seed", "1",
                                       "--tol", str(args.tol), "--path_table", table, "--progress_seconds", "0"]
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=args.limit)
    seconds = time.perf_counter() - t0
    data = np.genfromtxt(table, delimiter=",", names=True)
    return seconds, data["lambda"], data["cv_mse"]


def run_sklearn(X, y, lambdas, folds, jobs):
    from sklearn.linear_model import LassoCV
    from sklearn.model_selection import PredefinedSplit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = LassoCV(alphas=lambdas, cv=PredefinedSplit(folds), n_jobs=jobs, max_iter=100_000).fit(X, y)
        seconds = time.perf_counter() - t0
    return seconds, float(model.alpha_)


GLMNET = r"""
suppressMessages(library(glmnet)); suppressMessages(library(Matrix))
a <- commandArgs(TRUE)
x <- as(readMM(a[1]), "CsparseMatrix"); y <- scan(a[2], quiet=TRUE)
foldid <- scan(a[3], quiet=TRUE); lambda <- scan(a[4], quiet=TRUE)
t <- system.time(fit <- cv.glmnet(x, y, lambda=lambda, foldid=foldid, standardize=FALSE))
cat(t[["elapsed"]], fit$lambda.min, "\n")
"""


def run_glmnet(X, y, lambdas, folds, directory):
    if shutil.which("Rscript") is None:
        return None, None
    from scipy.io import mmwrite
    paths = [os.path.join(directory, name) for name in ("x.mtx", "y.txt", "folds.txt", "lambdas.txt", "cv.R")]
    mmwrite(paths[0], X)
    np.savetxt(paths[1], y)
    np.savetxt(paths[2], folds + 1, fmt="%d")
    np.savetxt(paths[3], lambdas)
    with open(paths[4], "w") as script:
        script.write(GLMNET)
    done = subprocess.run(["Rscript", paths[4]] + paths[:4], capture_output=True, text=True)
    if done.returncode != 0:
        return None, None
    seconds, lambda_min = done.stdout.split()
    return float(seconds), float(lambda_min)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--schmp", required=True)
    parser.add_argument("--launcher", default="")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--min_ratio", type=float, default=0.01)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=600)
    args = parser.parse_args()
    X, y = load_svmlight_file(args.data)
    X = X.tocsc()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    folds = folds_of_rows(X.shape[0], args.folds, 1)
    with tempfile.TemporaryDirectory() as directory:
        seconds, lambdas, cv_mse = run_schmp(args, os.path.join(directory, "cv.csv"))
        result = {"data": os.path.basename(args.data), "rows": X.shape[0], "cols": X.shape[1],
                  "schmp": {"seconds": seconds, "lambda_min": float(lambdas[int(np.nanargmin(cv_mse))])}}
        sk_seconds, sk_min = run_sklearn(X, y, lambdas, folds, args.jobs)
        result["sklearn"] = {"seconds": sk_seconds, "lambda_min": sk_min}
        gl_seconds, gl_min = run_glmnet(X, y, lambdas, folds, directory)
        if gl_seconds is not None:
            result["glmnet"] = {"seconds": gl_seconds, "lambda_min": gl_min}
    for solver in ("schmp", "sklearn", "glmnet"):
        if solver in result:
            result[solver]["index"] = int(np.argmin(np.abs(np.log(lambdas / result[solver]["lambda_min"]))))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
