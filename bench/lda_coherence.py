#!/usr/bin/env python3
"""Mean topic coherence of a schmp-lda model file, by the definitions of docs/lda.md#coherence.

    lda_coherence.py PREFIX.word_topic DOCWORD [--top 10]

Top words: most tokens in the topic first, ties to the lower word id, none without a token. UMass and
NPMI by document co-occurrence in DOCWORD (UCI bag-of-words). Scores a peer's model (exported in
schmp-lda's format) the way schmp-lda scores its own. Prints one JSON object: the means over the topics
that have a score.
"""
import argparse
import json
import math


def read_counts(path):
    rows = []
    with open(path) as lines:
        for line in lines:
            if not line.startswith("#"):
                rows.append([int(value) for value in line.split()])
    return rows


def read_documents(path):
    documents = {}
    with open(path) as lines:
        for _ in range(3):
            next(lines)
        for line in lines:
            fields = line.split()
            if fields:
                documents.setdefault(int(fields[0]), set()).add(int(fields[1]) - 1)
    return list(documents.values())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("word_topic")
    parser.add_argument("docword")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    counts = read_counts(args.word_topic)
    documents = read_documents(args.docword)
    holding = {}  # word -> the documents that hold it
    for d, words in enumerate(documents):
        for word in words:
            holding.setdefault(word, set()).add(d)
    n = len(documents)
    umass_scores, npmi_scores = [], []
    for k in range(len(counts[0])):
        top = sorted((w for w in range(len(counts)) if counts[w][k] > 0), key=lambda w: (-counts[w][k], w))
        top = top[:args.top]
        if len(top) < 2:
            continue
        umass, npmi, pairs = 0.0, 0.0, 0
        for i in range(1, len(top)):
            for j in range(i):
                d_i, d_j = holding.get(top[i], set()), holding.get(top[j], set())
                both = len(d_i & d_j)
                umass += math.log((both + 1) / len(d_j))
                p_i, p_j, p_ij = len(d_i) / n, len(d_j) / n, both / n
                npmi += -1.0 if p_ij == 0 else 1.0 if p_ij == 1 else math.log(p_ij / (p_i * p_j)) / -math.log(p_ij)
                pairs += 1
        umass_scores.append(umass)
        npmi_scores.append(npmi / pairs)
    print(json.dumps({"umass": sum(umass_scores) / len(umass_scores), "npmi": sum(npmi_scores) / len(npmi_scores)}))


if __name__ == "__main__":
    main()
