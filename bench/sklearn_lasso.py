#!/usr/bin/python3
"""scikit-learn's Lasso on a LIBSVM file, for bench/lasso_vs_sklearn.sh.

Solves the same problem as schmp-lasso:

    minimise (1/2n) ||y - X w||^2 + lambda ||w||_1,   no intercept,
    lambda = lambda_ratio * lambda_max,  lambda_max = ||X^T y||_inf / n

and prints one JSON object on stdout:

    load_seconds   reading the file and converting X to CSC
    fit_seconds    Lasso.fit only
    objective      (1/2n)||y - Xw||^2 + lambda ||w||_1, computed here from the fitted w
    nnz            nonzeros in w
    plus lambda, lambda_max, n_iter, dual_gap (sklearn's, unnormalised), converged, rows, cols.

Run it with the Debian interpreter, /usr/bin/python3 (scripts/setup.sh --bench installs
python3-sklearn, python3-numpy and python3-scipy for it).
"""

import argparse
import json
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="LIBSVM file (1-based feature indices)")
    parser.add_argument("--lambda_ratio", type=float, default=0.1, help="lambda as a fraction of lambda_max")
    parser.add_argument("--tol", type=float, default=1e-4, help="Lasso tol (default: sklearn's 1e-4)")
    parser.add_argument("--max_iter", type=int, default=1_000_000, help="Lasso max_iter (epochs)")
    parser.add_argument("--precompute", choices=["off", "auto", "on"], default="off",
                        help="Lasso precompute (Gram matrix); sklearn ignores it for sparse X (default: off)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    X, y = load_svmlight_file(args.data, dtype=np.float64, zero_based=False)
    X = X.tocsc()
    y = np.asarray(y, dtype=np.float64)
    load_seconds = time.perf_counter() - t0

    n = X.shape[0]
    lambda_max = float(np.max(np.abs(X.T @ y))) / n
    lam = args.lambda_ratio * lambda_max

    precompute = {"off": False, "auto": "auto", "on": True}[args.precompute]
    model = Lasso(alpha=lam, fit_intercept=False, tol=args.tol, max_iter=args.max_iter,
                  selection="cyclic", precompute=precompute)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        model.fit(X, y)
        fit_seconds = time.perf_counter() - t0
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)

    w = np.asarray(model.coef_, dtype=np.float64).ravel()
    residual = y - X @ w
    objective = float(residual @ residual) / (2.0 * n) + lam * float(np.abs(w).sum())

    json.dump({
        "data": args.data,
        "rows": int(n),
        "cols": int(X.shape[1]),
        "lambda_ratio": args.lambda_ratio,
        "lambda_max": lambda_max,
        "lambda": lam,
        "tol": args.tol,
        "load_seconds": load_seconds,
        "fit_seconds": fit_seconds,
        "objective": objective,
        "nnz": int(np.count_nonzero(w)),
        "n_iter": int(np.max(model.n_iter_)),
        "dual_gap": float(np.max(model.dual_gap_)),
        "converged": converged,
    }, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
