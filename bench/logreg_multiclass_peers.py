#!/usr/bin/env python3
"""bench/logreg_multiclass_vs_peers.sh's cases: one-vs-rest L1 logistic regression with liblinear's
penalised bias (-B 1; schmp-logreg --multiclass --bias), schmp-logreg against liblinear-train -s 6
and scikit-learn's OneVsRestClassifier(LogisticRegression(penalty='l1', solver='liblinear')), same C,
same 80/20 split.

The sets: wine (bundled, 3 classes), scikit-learn's digits (10 classes) and a generated sparse set of
3 classes (--rows x --cols, 30 nonzeros a row, labels the argmax of three sparse linear scores plus
noise). Each solver's time is its whole fit: schmp's and liblinear's the whole command (start-up and
reading included), scikit-learn's fit(). Accuracy is on the held-out fifth.

Then the softmax (multinomial) fit with an unpenalised intercept: schmp-logreg --multinomial against
scikit-learn's LogisticRegression(penalty='l1', solver='saga'), its only solver of the L1 softmax, at
tol 1e-4 and at most --saga_epochs epochs. Each one's objective on the training rows is computed here
from its weights, so that they compare at the point each reached.

Prints one JSON object per set.
"""

import argparse
import json
import os
import re
import subprocess
import time
import warnings

import numpy as np
import scipy.sparse as sparse
from sklearn.datasets import dump_svmlight_file, load_digits, load_svmlight_file


def generated(rows, cols, seed):
    rng = np.random.default_rng(seed)
    X = sparse.random(rows, cols, density=30 / cols, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    W = np.zeros((cols, 3))
    for c in range(3):
        support = rng.choice(cols, 50, replace=False)
        W[support, c] = rng.standard_normal(50)
    scores = X @ W + 0.3 * rng.standard_normal((rows, 3))
    return X, np.argmax(scores, axis=1) + 1.0


def split_files(name, X, y, directory):
    rng = np.random.default_rng(0)
    test = rng.random(X.shape[0]) < 0.2
    paths = [os.path.join(directory, f"{name}.{part}.svm") for part in ("train", "test")]
    dump_svmlight_file(X[~test], y[~test], paths[0], zero_based=False)
    dump_svmlight_file(X[test], y[test], paths[1], zero_based=False)
    return paths


def softmax_objective(X, y, W, b, C):
    """||W||_1 + C sum_i (log sum_l exp(z_il) - z_{i y_i}), z = X W' + b; y the class indices."""
    Z = np.asarray(X @ W.T) + b
    top = Z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(Z - top).sum(axis=1)) + top[:, 0]
    return float(np.abs(W).sum() + C * (lse - Z[np.arange(len(y)), y]).sum())


def model_weights(path, classes, features):
    """The class weights and intercepts of a liblinear multiclass model file with bias 1."""
    lines = open(path).read().split("\n")
    start = lines.index("w") + 1
    table = np.array([[float(v) for v in line.split()] for line in lines[start:start + features + 1]])
    return table[:features].T, table[features]


def timed(command):
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schmp", required=True)
    parser.add_argument("--wine", required=True)
    parser.add_argument("--launcher", default="")
    parser.add_argument("--directory", required=True)
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--cols", type=int, default=5000)
    parser.add_argument("--saga_epochs", type=int, default=100)
    args = parser.parse_args()
    digits = load_digits()
    sets = [("wine", *load_svmlight_file(args.wine), 1.0),
            ("digits", sparse.csr_matrix(digits.data), digits.target + 1.0, 0.1),
            ("generated", *generated(args.rows, args.cols, 1), 1.0)]
    for name, X, y, C in sets:
        train, test = split_files(name, X, y, args.directory)
        model = os.path.join(args.directory, name + ".model")
        result = {"data": name, "rows": X.shape[0], "cols": X.shape[1], "classes": len(np.unique(y)), "C": C}
        seconds, _ = timed(args.launcher.split() + [args.schmp, "--data", train, "--multiclass", "--bias", "--C",
                                                    str(C), "--tol", "1e-6", "--output", model,
                                                    "--progress_seconds", "0"])
        _, out = timed([args.schmp, "predict", "--model", model, "--data", test])
        result["schmp"] = {"seconds": seconds, "accuracy": float(re.search(r"accuracy ([0-9.]+)", out)[1])}
        seconds, _ = timed(["liblinear-train", "-s", "6", "-B", "1", "-c", str(C), "-e", "1e-6", "-q", train, model])
        _, out = timed(["liblinear-predict", test, model, os.path.join(args.directory, "predictions")])
        result["liblinear"] = {"seconds": seconds,
                               "accuracy": float(re.search(r"Accuracy = ([0-9.]+)%", out)[1]) / 100}
        X_train, y_train = load_svmlight_file(train, n_features=X.shape[1])
        X_test, y_test = load_svmlight_file(test, n_features=X.shape[1])
        for part in (X_train, X_test):  # scikit-learn's liblinear takes 32-bit indices only
            part.indices, part.indptr = part.indices.astype(np.int32), part.indptr.astype(np.int32)
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            fit = OneVsRestClassifier(
                LogisticRegression(penalty="l1", C=C, solver="liblinear", tol=1e-6, max_iter=10000)).fit(
                    X_train, y_train)
            seconds = time.perf_counter() - t0
        result["sklearn"] = {"seconds": seconds, "accuracy": float(fit.score(X_test, y_test))}
        result["multinomial"] = multinomial(args, train, test, X_train, y_train, X_test, y_test, C, model)
        print(json.dumps(result), flush=True)


def multinomial(args, train, test, X_train, y_train, X_test, y_test, C, model):
    """The softmax fit: schmp-logreg --multinomial against scikit-learn's saga."""
    labels = np.unique(y_train)
    classes = np.searchsorted(labels, y_train)
    seconds, _ = timed(args.launcher.split() + [args.schmp, "--data", train, "--multinomial", "--C", str(C),
                                                "--tol", "1e-6", "--output", model, "--progress_seconds", "0"])
    _, out = timed([args.schmp, "predict", "--multinomial", "--model", model, "--data", test])
    W, b = model_weights(model, len(labels), X_train.shape[1])
    result = {"schmp": {"seconds": seconds, "accuracy": float(re.search(r"accuracy ([0-9.]+)", out)[1]),
                        "objective": softmax_objective(X_train, classes, W, b, C)}}
    from sklearn.linear_model import LogisticRegression
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        fit = LogisticRegression(penalty="l1", C=C, solver="saga", tol=1e-4, max_iter=args.saga_epochs).fit(
            X_train, y_train)
        seconds = time.perf_counter() - t0
    result["sklearn"] = {"seconds": seconds, "accuracy": float(fit.score(X_test, y_test)), "epochs": int(fit.n_iter_[0]),
                         "objective": softmax_objective(X_train, classes, fit.coef_, fit.intercept_, C)}
    return result


if __name__ == "__main__":
    main()
