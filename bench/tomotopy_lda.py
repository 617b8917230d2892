#!/usr/bin/env python3
"""tomotopy's collapsed Gibbs LDA on a UCI bag-of-words corpus, traced like schmp-lda.

    tomotopy_lda.py DOCWORD --topics K --alpha A --beta B --iterations T --workers N --trace CSV
                    [--optim_interval N --burn_in B] [--export PREFIX]

tomotopy (a C++ library with Python bindings, on PyPI) samples with SIMD-vectorised exact Gibbs
draws and runs its threads on partitions of the vocabulary, much as schmp-lda does. Hyperparameter
optimisation is off by default (optim_interval 0) so that both fit the same model; --optim_interval
turns on tomotopy's Mallet-like learning of an asymmetric alpha (beta stays fixed). --export writes the
model as schmp-lda's PREFIX.word_topic (counts n_kw = tomotopy's unnormalised weights less eta, and its
alpha_k), so that `schmp-lda infer` scores it like schmp's own. Every 10 iterations the
trace gets a row `round,seconds,objective` with tomotopy's ll_per_word, the joint log-likelihood
log p(w, z) per token of its current state; seconds count training only. Prints one JSON object:
load and training seconds, tokens, and the last ll_per_word.
"""
import argparse
import json
import time

import tomotopy as tp


def export(model, words, beta, prefix):
    """Writes PREFIX.word_topic in schmp-lda's format: W lines of K counts, word ids 1-based."""
    row_of = {word: row for row, word in enumerate(model.used_vocabs)}
    weights = [model.get_topic_word_dist(k, normalize=False) for k in range(model.k)]
    alpha = [float(a) for a in model.alpha]
    with open(prefix + ".word_topic", "w") as out:
        out.write(f"# schmp-lda word-topic counts: {words} words, {model.k} topics, "
                  f"alpha {sum(alpha) / len(alpha)!r}, beta {beta!r}\n")
        out.write("# alpha by topic: " + " ".join(repr(a) for a in alpha) + "\n")
        for word in range(1, words + 1):
            row = row_of.get(str(word))
            counts = [0] * model.k if row is None else [round(w[row] - model.eta) for w in weights]
            out.write(" ".join(str(c) for c in counts) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("docword")
    parser.add_argument("--topics", type=int, required=True)
    parser.add_argument("--alpha", type=float, required=True)
    parser.add_argument("--beta", type=float, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--optim_interval", type=int, default=0)
    parser.add_argument("--burn_in", type=int, default=0)
    parser.add_argument("--export")
    args = parser.parse_args()

    started = time.perf_counter()
    model = tp.LDAModel(k=args.topics, alpha=args.alpha, eta=args.beta, seed=args.seed)
    model.optim_interval = args.optim_interval
    model.burn_in = args.burn_in
    with open(args.docword) as lines:
        next(lines)  # D
        words_declared = int(next(lines))
        next(lines)  # NNZ
        words, current = [], None
        for line in lines:
            fields = line.split()
            if not fields:
                continue
            document = fields[0]
            if document != current and words:
                model.add_doc(words)
                words = []
            current = document
            words.extend([fields[1]] * int(fields[2]))
        if words:
            model.add_doc(words)
    loaded = time.perf_counter()

    training = 0.0
    with open(args.trace, "w") as trace:
        trace.write("round,seconds,objective\n")
        done = 0
        while done < args.iterations:
            step = min(10, args.iterations - done)
            began = time.perf_counter()
            model.train(step, workers=args.workers, parallel=tp.ParallelScheme.PARTITION)
            training += time.perf_counter() - began
            done += step
            trace.write(f"{done},{training:.6f},{model.ll_per_word:.12g}\n")
            trace.flush()
    if args.export:
        export(model, words_declared, args.beta, args.export)
    print(json.dumps({"load_seconds": loaded - started, "train_seconds": training,
                      "tokens": model.num_words, "ll_per_word": model.ll_per_word}))


if __name__ == "__main__":
    main()
