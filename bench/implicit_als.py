#!/usr/bin/env python3
"""implicit's AlternatingLeastSquares on interaction counts, the model written in LIBMF's format.

    implicit_als.py TRAIN --factors K --regularization L --alpha A --iterations T --threads N --model OUT

TRAIN holds 'user item count' lines, 0-based. implicit weighs an observed cell alpha * value; so that
it fits schmp-mf --implicit's objective (confidence 1 + alpha r), it is handed the values 1 + alpha r
with its alpha at 1. The model (f 12, users' and items' factors; 'F' for ids without interactions) is
what `schmp-mf predict --exclude` ranks, so both are scored the same way. Prints one JSON object: the
fit's seconds, and the objective schmp-mf reports, at implicit's factors: sum over every cell of
c (p - w.h)^2 plus lambda times the squared factors (docs/mf.md#implicit-feedback).
"""
import argparse
import json
import os
import time

# implicit's own advice: its threads, not BLAS's (set before numpy loads BLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import scipy.sparse as sp
import threadpoolctl


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train")
    parser.add_argument("--factors", type=int, required=True)
    parser.add_argument("--regularization", type=float, required=True)
    parser.add_argument("--alpha", type=float, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    threadpoolctl.threadpool_limits(1, "blas")
    from implicit.cpu.als import AlternatingLeastSquares

    data = np.loadtxt(args.train, ndmin=2)
    users, items = data[:, 0].astype(np.int64), data[:, 1].astype(np.int64)
    shape = (int(users.max()) + 1, int(items.max()) + 1)
    # A pair on several lines counts their sum, as schmp-mf --implicit takes it.
    weights = sp.csr_matrix((data[:, 2], (users, items)), shape=shape)
    weights.sum_duplicates()
    weights.data = 1 + args.alpha * weights.data
    model = AlternatingLeastSquares(factors=args.factors, regularization=args.regularization, alpha=1.0,
                                    iterations=args.iterations, num_threads=args.threads, random_state=1,
                                    calculate_training_loss=False)
    start = time.perf_counter()
    model.fit(weights, show_progress=False)
    seconds = time.perf_counter() - start

    users_f, items_f = model.user_factors[:, : args.factors], model.item_factors[:, : args.factors]
    fit = np.einsum("ij,ij->i", users_f[users], items_f[items])
    coo = weights.tocoo()
    users, items, confidence = coo.row, coo.col, coo.data
    objective = float(np.sum(confidence * (1 - fit) ** 2 - fit**2) + np.sum((users_f.T @ users_f) * (items_f.T @ items_f))
                      + args.regularization * (np.sum(users_f**2) + np.sum(items_f**2)))

    known_users = np.diff(weights.indptr) > 0
    known_items = np.bincount(items, minlength=shape[1]) > 0
    with open(args.model, "w") as out:
        out.write(f"f 12\nm {shape[0]}\nn {shape[1]}\nk {args.factors}\nb 0\n")
        for name, factors, known in (("p", model.user_factors, known_users), ("q", model.item_factors, known_items)):
            for i, row in enumerate(factors):
                values = " ".join(repr(float(v)) if known[i] else "0" for v in row[: args.factors])
                out.write(f"{name}{i} {'T' if known[i] else 'F'} {values}\n")
    print(json.dumps({"seconds": seconds, "objective": objective}))


if __name__ == "__main__":
    main()
