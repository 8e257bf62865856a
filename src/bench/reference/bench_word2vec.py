"""gensim reference for `crossling bench word2vec`: word2vec with negative sampling on the corpus file that
crossling wrote (one sentence a line, words separated by single spaces, every word already at min count).

Modes: `iterable` reads the file into a list of token lists first (the usual API: gensim's Python job producer
feeds its C workers) and `corpus_file` lets gensim's workers read the file themselves. Either way the vocabulary
and weights are built first (`build_vocab`, untimed), then `train()` is timed (wall: perf_counter, CPU:
process_time of the whole process). Writes PREFIX.in.safetensors (the word vectors, `wv`) and
PREFIX.out.safetensors (the output vectors `syn1neg`, same words in the same order) in the layout of crossling's
`WordVectors`, and prints one JSON line: seconds, cpu_seconds, raw and effective words and their rates, versions.

Usage: bench_word2vec.py CORPUS.txt PREFIX --mode iterable|corpus_file --sg 1 --dim 100 --window 5 --negative 5
       --sample 1e-3 --min-count 5 --epochs 3 --alpha 0.025 --min-alpha 0.0001 --workers 2 --seed 1
"""

import argparse
import json
import time

import gensim
import numpy as np
from gensim.models import Word2Vec
from gensim.models.word2vec_inner import FAST_VERSION
from safetensors.numpy import save_file


def save(path, words, matrix):
    """The layout of crossling's `WordVectors::save_safetensors`: tensor `vectors` [N, D], metadata `words`."""
    save_file({"vectors": np.ascontiguousarray(matrix, dtype=np.float32)}, path, metadata={"words": "\n".join(words)})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("prefix")
    p.add_argument("--mode", choices=["iterable", "corpus_file"], default="iterable")
    p.add_argument("--sg", type=int, default=1)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--window", type=int, default=5)
    p.add_argument("--negative", type=int, default=5)
    p.add_argument("--sample", type=float, default=1e-3)
    p.add_argument("--min-count", type=int, default=5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--alpha", type=float, default=0.025)
    p.add_argument("--min-alpha", type=float, default=0.0001)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    model = Word2Vec(
        vector_size=a.dim, window=a.window, min_count=a.min_count, sample=a.sample, sg=a.sg, hs=0,
        negative=a.negative, ns_exponent=0.75, cbow_mean=1, alpha=a.alpha, min_alpha=a.min_alpha,
        epochs=a.epochs, workers=a.workers, seed=a.seed,
    )
    if a.mode == "iterable":
        with open(a.corpus, encoding="utf-8") as f:
            sentences = [line.split() for line in f]
        model.build_vocab(sentences)
        t0, c0 = time.perf_counter(), time.process_time()
        effective, raw = model.train(sentences, total_examples=model.corpus_count, epochs=a.epochs)
    else:
        model.build_vocab(corpus_file=a.corpus)
        t0, c0 = time.perf_counter(), time.process_time()
        effective, raw = model.train(corpus_file=a.corpus, total_words=model.corpus_total_words, epochs=a.epochs)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0

    words = list(model.wv.index_to_key)
    save(a.prefix + ".in.safetensors", words, model.wv.vectors)
    save(a.prefix + ".out.safetensors", words, model.syn1neg)
    print(json.dumps({
        "mode": a.mode, "seconds": seconds, "cpu_seconds": cpu, "raw_words": raw, "effective_words": effective,
        "words_per_s": raw / seconds, "effective_words_per_s": effective / seconds, "vocab": len(words),
        "gensim": gensim.__version__, "numpy": np.__version__, "fast_version": FAST_VERSION,
    }))


if __name__ == "__main__":
    main()
