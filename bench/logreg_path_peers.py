#!/usr/bin/env python3
"""One case of bench/logreg_path_vs_peers.sh: a regularisation path of L1 logistic regression, schmp-logreg
against liblinear (scikit-learn's copy), celer's celer_path, skglm (warm-started SparseLogisticRegression
fits) and, where R has it, glmnet (family binomial, its thresh as the tolerance), same data, same lambdas.

Every solver minimises glmnet's binomial objective without an intercept (celer has none):

    (1/n) sum_i log(1 + exp(-y_i x_i . w)) + lambda ||w||_1

at --count lambdas from lambda_max = ||X^T (y01 - 1/2)||_inf / n down to --min_ratio times it, log-spaced
(y01: the labels as 0/1). Labels above 0 are +1 and the others -1, as schmp-logreg reads them.

- liblinear minimises ||w||_1 + C sum_i loss: C = 1 / (n lambda), one fit per lambda from zero (it has no
  warm start). celer_path minimises sum_i loss + alpha ||w||_1: alpha = n lambda; it runs its prox-Newton
  solver, the default of celer's LogisticRegression. skglm's alpha is lambda. glmnet gets y01, the
  lambdas, standardize=FALSE and fdev = 0, devmax = 1, so that it solves every lambda.
- Each solver runs the whole path at tolerances 1e-2, 1e-3, ... 1e-10 (schmp: --tol; glmnet: thresh), a
  fresh run each, stopped after --limit seconds; the ladder ends there, or once two tolerances in a row
  give the same objectives (within 1e-12) at every lambda, within 1e-9 of the other solvers' lowest.
  A peer's time is its fits' (glmnet's: system.time of glmnet()); schmp's is the solve's, the last row
  of its path table. None of them includes loading the data.
- glmnet runs first, then schmp, then the Python peers. glmnet first fits the path once untimed; each
  Python peer fits every tenth lambda untimed at 1e-6, so that numba has compiled what skglm needs.
- Every objective is computed here from the coefficients, the same way for every solver. The optimum at
  each lambda is the lowest objective any run reached there. A run's path reaches a target when every
  lambda's relative suboptimality is at most it; a solver's time to the target is the time of its
  loosest tolerance that reaches it.
- schmp-logreg works out its own lambdas; a warning goes to stderr when they differ from the ones here.

Prints one JSON object: per solver the seconds to each target and the worst lambda's relative
suboptimality in its best run. Details of every run go to stderr. Peers that are not installed are left out.
"""

import argparse
import csv
import importlib
import inspect
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

from peer_timing import TOLS, run_within

TARGETS = [1e-4, 1e-6]
PEERS = {"liblinear": "sklearn", "celer": "celer", "skglm": "skglm"}  # peer: the module it needs


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def objectives(X, y, coefs, lambdas):
    """The objective at each lambda; infinite where a run left a lambda unsolved (None)."""
    n = X.shape[0]
    return [np.inf if w is None else float(np.logaddexp(0.0, -y * (X @ w)).sum() / n + lam * np.abs(w).sum())
            for w, lam in zip(coefs, lambdas)]


def settled(fits, others):
    """Whether a solver's ladder can end: its last two runs' objectives agree within 1e-12 at every lambda,
    and are within 1e-9 of the lowest any other solver's runs reached so far. Tighter tolerances would
    then change nothing that the targets can see."""
    if len(fits) < 2 or not others:
        return False
    a, b = np.array(fits[-2][2]), np.array(fits[-1][2])
    lowest = np.min(others, axis=0)
    return bool(np.all(np.isfinite(a)) and np.all(np.abs(a - b) <= 1e-12 * np.abs(b)) and
                np.all(b - lowest <= 1e-9 * lowest))


def liblinear_model(C, tol):
    from sklearn.linear_model import LogisticRegression
    common = dict(C=C, solver="liblinear", fit_intercept=False, tol=tol, max_iter=1000)
    # Newer scikit-learn deprecates penalty=; there l1_ratio=1 is the L1 penalty.
    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        return LogisticRegression(l1_ratio=1.0, **common)
    return LogisticRegression(penalty="l1", **common)


def peer_path(peer, X_rows, X_cols, y, lambdas, tol):
    """Seconds and the coefficients at each lambda of one peer's path."""
    n = X_rows.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        coefs = []
        if peer == "liblinear":
            for lam in lambdas:
                model = liblinear_model(1.0 / (n * lam), tol)
                model.fit(X_rows, y)
                coefs.append(np.ravel(model.coef_).copy())
        elif peer == "celer":
            from celer import celer_path
            _, path, _ = celer_path(X_cols, y, "logreg", alphas=n * lambdas, tol=tol, max_iter=1000,
                                    max_epochs=1_000_000, use_PN=True)
            coefs = list(path.T)
        else:
            from skglm import SparseLogisticRegression
            model = SparseLogisticRegression(alpha=lambdas[0], fit_intercept=False, tol=tol, warm_start=True,
                                             max_iter=1000, max_epochs=1_000_000)
            for lam in lambdas:
                model.alpha = lam
                model.fit(X_cols, y)
                coefs.append(np.ravel(model.coef_).copy())
        return time.perf_counter() - t0, coefs


GLMNET_PATH = r"""
suppressMessages(library(glmnet)); suppressMessages(library(Matrix))
a <- commandArgs(TRUE)
x <- as(readMM(a[1]), "CsparseMatrix"); if (a[6] == "dense") x <- as.matrix(x)
y <- scan(a[2], quiet=TRUE); lambda <- scan(a[3], quiet=TRUE)
glmnet.control(fdev=0, devmax=1)
thresholds <- scan(a[4], quiet=TRUE)
fit <- glmnet(x, y, family="binomial", lambda=lambda, intercept=FALSE, standardize=FALSE, thresh=thresholds[1])
cat("loaded\n"); flush(stdout())
for (thresh in thresholds) {
  t <- system.time(fit <- glmnet(x, y, family="binomial", lambda=lambda, intercept=FALSE, standardize=FALSE,
                                 thresh=thresh, maxit=1e8))[["elapsed"]]
  b <- summary(fit$beta)
  write.table(cbind(b$i, b$j, b$x), file=file.path(a[5], paste0(thresh, ".txt")), row.names=FALSE,
              col.names=FALSE)
  cat(thresh, t, length(fit$lambda), "\n"); flush(stdout())
}
"""


def glmnet_paths(X, y01, lambdas, limit, scratch):
    """[(seconds, coefficients at each lambda)] by tolerance of TOLS, glmnet's fit times; empty without
    R's glmnet. R loads the data once; a fit that takes longer than `limit` seconds ends the ladder."""
    if shutil.which("Rscript") is None:
        return []
    from scipy.io import mmwrite
    import scipy.sparse as sparse
    paths = [os.path.join(scratch, name) for name in ("x.mtx", "y.txt", "lambdas.txt", "tols.txt", "path.R")]
    mmwrite(paths[0], sparse.csc_matrix(X))
    np.savetxt(paths[1], y01)
    np.savetxt(paths[2], lambdas, fmt="%.17g")
    np.savetxt(paths[3], TOLS)
    with open(paths[4], "w") as script:
        script.write(GLMNET_PATH)
    dense = "dense" if isinstance(X, np.ndarray) else "sparse"
    r = subprocess.Popen(["Rscript", paths[4]] + paths[:4] + [scratch, dense], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in r.stdout] + [lines.put(None)], daemon=True).start()
    fits = []
    try:
        while True:
            try:
                line = lines.get(timeout=limit)
            except queue.Empty:
                log(f"  glmnet: stopped after {limit:g} s without a result")
                break
            if line is None:
                break
            if line.strip() == "loaded":
                continue
            thresh, seconds, solved = line.split()
            coefs = [np.zeros(X.shape[1]) if k < int(solved) else None for k in range(len(lambdas))]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an empty file: every coefficient zero
                rows = np.loadtxt(os.path.join(scratch, thresh + ".txt"), ndmin=2)
            for row in rows:
                coefs[int(row[1]) - 1][int(row[0]) - 1] = row[2]
            fits.append((float(seconds), coefs))
    finally:
        r.kill()
        r.wait()
    return fits


def schmp_path(command, data, count, min_ratio, tol, scratch, limit, features):
    """The solve's seconds, schmp-logreg's lambdas, the coefficients at each (None where it left one
    unsolved) and its cumulative seconds at each; None when it ran out of time."""
    models, table = os.path.join(scratch, "path.models"), os.path.join(scratch, "path.csv")
    try:
        subprocess.run(command + ["--data", data, "--path", str(count), "--lambda_min_ratio", str(min_ratio),
                                  "--tol", str(tol), "--fit_intercept=false", "--path_table", table,
                                  "--path_models", models, "--progress_seconds", "0"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    with open(table) as f:
        rows = list(csv.DictReader(f))
    lambdas = [float(r["lambda"]) for r in rows]
    seconds = [float(r["seconds"]) for r in rows]
    coefs, sign = [], 1.0
    for line in open(models):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "lambda":
            coefs.append(np.zeros(features))
        elif fields[0] == "labels":
            sign = 1.0 if float(fields[1]) > 0 else -1.0  # the weights are the first label's
        elif len(fields) == 2 and fields[0].isdigit() and coefs:
            if int(fields[0]) <= features:  # index features + 1 would be an intercept or bias
                coefs[-1][int(fields[0]) - 1] = sign * float(fields[1])
    coefs += [None] * (count - len(coefs))
    return seconds[-1], lambdas, coefs, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="LIBSVM file, labels +1/-1 or 1/0")
    parser.add_argument("--schmp", required=True, help="the schmp-logreg binary")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--min_ratio", type=float, default=0.01)
    parser.add_argument("--peers", default="liblinear,celer,skglm,glmnet")
    parser.add_argument("--limit", type=float, default=120, help="seconds allowed to one path")
    args = parser.parse_args()

    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # scikit-learn refuses int64
    y = np.where(y > 0, 1.0, -1.0)
    y01 = (y + 1) / 2
    # liblinear takes rows; celer and skglm take columns, or a dense Fortran array when most entries are
    # nonzeros.
    X_cols = X.tocsc()
    X_cols.indices, X_cols.indptr = X_cols.indices.astype(np.int32), X_cols.indptr.astype(np.int32)
    if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
        X_cols = np.asfortranarray(X.toarray())
    n, features = X.shape
    lam_max = float(np.max(np.abs(X.T @ (y01 - 0.5)))) / n
    lambdas = lam_max * args.min_ratio ** (np.arange(args.count) / (args.count - 1))

    runs = {}  # solver -> [(tol, seconds, objectives)] by tolerance, loosest first
    schmp_seconds = {}  # tol -> schmp's cumulative seconds at each lambda
    peers = args.peers.split(",")

    def others(solver):
        return [values for name, fits in runs.items() if name != solver for _, _, values in fits]

    with tempfile.TemporaryDirectory() as scratch:
        if "glmnet" in peers:
            fits = glmnet_paths(X, y01, lambdas, args.limit, scratch)
            if fits:
                runs["glmnet"] = [(tol, seconds, objectives(X, y, coefs, lambdas))
                                  for tol, (seconds, coefs) in zip(TOLS, fits)]
            else:
                log("  glmnet: no result (is R's glmnet installed?), left out")
        runs["schmp"] = []
        for tol in TOLS:
            result = schmp_path([args.schmp], args.data, args.count, args.min_ratio, tol, scratch, args.limit,
                                features)
            if result is None:
                log(f"  schmp: stopped at tol {tol:g} after {args.limit:g} s")
                break
            seconds, theirs, coefs, cumulative = result
            if len(runs["schmp"]) == 0 and theirs:
                k = min(len(theirs), len(lambdas))
                differ = float(np.max(np.abs(np.array(theirs[:k]) - lambdas[:k]) / lambdas[:k]))
                if differ > 1e-9:
                    log(f"  warning: schmp-logreg's lambdas differ from these by up to {differ:.3g} (relative)")
            runs["schmp"].append((tol, seconds, objectives(X, y, coefs, lambdas)))
            schmp_seconds[tol] = cumulative
            if settled(runs["schmp"], others("schmp")):
                break
    for peer in peers:
        if peer == "glmnet":
            continue
        try:
            importlib.import_module(PEERS[peer])
        except ImportError:
            log(f"  {peer}: not installed, left out")
            continue
        # Warm-up, inherited by the forks: numba compiles some of skglm's code only when a fit gets far
        # enough to use it, so every tenth lambda at 1e-6 (a child's compiles are lost with it).
        peer_path(peer, X, X_cols, y, lambdas[::10], 1e-6)
        runs[peer] = []
        for tol in TOLS:
            result = run_within(args.limit, lambda: peer_path(peer, X, X_cols, y, lambdas, tol))
            if result is None:
                log(f"  {peer}: stopped at tol {tol:g} after {args.limit:g} s")
                break
            runs[peer].append((tol, result[0], objectives(X, y, result[1], lambdas)))
            if settled(runs[peer], others(peer)):
                break

    best = np.min([values for fits in runs.values() for _, _, values in fits], axis=0)
    result = {"data": os.path.basename(args.data), "count": args.count, "min_ratio": args.min_ratio,
              "rows": n, "cols": features, "lambda_max": lam_max, "solvers": {}}
    for solver, fits in runs.items():
        worst = [float(np.max((np.array(values) - best) / best)) for _, _, values in fits]
        for (tol, seconds, values), w in zip(fits, worst):
            k = int(np.argmax((np.array(values) - best) / best))
            log(f"  {solver:9} tol {tol:<6g} {seconds:9.4f} s  worst suboptimality {w:9.3g} at lambda {k + 1}")
        entry = {str(t): next((s for (_, s, _), w in zip(fits, worst) if w <= t), None) for t in TARGETS}
        entry["suboptimality"] = min(worst) if worst else None
        result["solvers"][solver] = entry
    # Where schmp spends its time: the lambdas that took longest in its first run to reach 1e-6.
    tol = next((tol for (tol, _, values) in runs["schmp"] if np.max((np.array(values) - best) / best) <= 1e-6), None)
    if tol is not None:
        steps = np.diff(np.concatenate([[0.0], schmp_seconds[tol]]))
        slow = np.argsort(steps)[::-1][:3]
        log(f"  schmp at tol {tol:g}: slowest lambdas " +
            ", ".join(f"{k + 1} ({steps[k]:.3g} s)" for k in slow) + f" of {steps.sum():.3g} s")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
