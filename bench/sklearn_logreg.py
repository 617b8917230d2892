#!/usr/bin/python3
"""scikit-learn's L1 logistic regression (its bundled liblinear) on a LIBSVM file, for
bench/logreg_vs_liblinear.sh.

Solves the same problem as schmp-logreg --penalty l1 and liblinear-train -s 6 -B -1:

    minimise ||w||_1 + C sum_i log(1 + exp(-y_i w . x_i)),   no intercept

and prints one JSON object on stdout:

    load_seconds   reading the file
    fit_seconds    LogisticRegression.fit only
    objective      computed here from the fitted w
    nnz            nonzeros in w
    n_iter         solver iterations

Run it with the Debian interpreter, /usr/bin/python3 (scripts/setup.sh --bench installs
python3-sklearn, python3-numpy and python3-scipy for it).
"""

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="LIBSVM file, labels +1/-1 or 1/0")
    parser.add_argument("--C", type=float, required=True)
    parser.add_argument("--tol", type=float, default=1e-6, help="liblinear's -e")
    args = parser.parse_args()

    started = time.perf_counter()
    X, y = load_svmlight_file(args.data)
    y = np.where(y > 0, 1.0, -1.0)
    loaded = time.perf_counter()
    model = LogisticRegression(penalty="l1", solver="liblinear", C=args.C, fit_intercept=False,
                               tol=args.tol, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    fitted = time.perf_counter()

    w = model.coef_.ravel()
    margins = y * (X @ w)
    loss = np.sum(np.logaddexp(0.0, -margins))
    print(json.dumps({
        "load_seconds": loaded - started,
        "fit_seconds": fitted - loaded,
        "objective": float(np.abs(w).sum() + args.C * loss),
        "nnz": int(np.count_nonzero(w)),
        "n_iter": int(np.max(model.n_iter_)),
        "rows": int(X.shape[0]),
        "cols": int(X.shape[1]),
    }))


if __name__ == "__main__":
    main()
