"""PyTorch reference for `crossling bench features`: sentence features of every layer with Hugging Face `transformers`.

Creates a randomly initialised `BertForMaskedLM` of the given shape (seeded, SDPA attention, eval mode), saves it
with `save_pretrained` to MODEL_DIR (crossling then imports that very folder), and times the extraction that the
figures do: every layer's hidden states (`output_hidden_states=True`, layer 0 = embeddings) mean-pooled over each
sentence's tokens, [CLS] and [SEP] excluded, under `torch.inference_mode()`.

Two loops are timed over the same sentences:
- `same_batches`: exactly crossling's length-sorted batches (BATCHES.npy / BATCH_OFFSETS.npy), so the ratio compares
  the model code alone;
- `fixed_batches`: the usual transformers loop, batches of `--fixed-batch` sentences in input order, each padded
  to its longest sentence.
One batch of each is run untimed first. The first loop is timed `--repeats` times (its best time is reported, every
time listed: the machine's noise shows in their spread); the second, the slow one, once. With `--pretrained`
MODEL_DIR is an existing BERT folder (e.g. crossling's e5-small), loaded with `AutoModel.from_pretrained` (SDPA
attention, no pooler) instead of a random model. Writes the pooled features of the first loop to OUT.npy
([layers + 1, sentences, hidden], float32) and prints one JSON line with the timings.

Usage: bench_features.py MODEL_DIR IDS.npy OFFSETS.npy BATCHES.npy BATCH_OFFSETS.npy OUT.npy --layers L --hidden D
       --heads H --ffn F --vocab V --max-positions P --threads T --seed S [--fixed-batch 32] [--device cpu]
       [--pretrained] [--repeats 1]
"""

import argparse
import json
import time

import numpy as np
import torch
import transformers
from transformers import AutoModel
from random_bert import add_shape_flags, random_bert  # src/bench/reference/, the script's folder


def padded(seqs, device):
    longest = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), longest), dtype=torch.long)
    mask = torch.zeros((len(seqs), longest), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.from_numpy(s)
        mask[i, : len(s)] = 1
    return ids.to(device), mask.to(device)


def pooled(bert, seqs, device):
    """[layers + 1, len(seqs), hidden]: the mean over each sentence's tokens without [CLS] (first) and [SEP] (last)."""
    ids, mask = padded(seqs, device)
    hs = bert(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
    w = mask.to(torch.float32)
    w[:, 0] = 0
    lens = torch.tensor([len(s) for s in seqs], device=device)
    w[torch.arange(len(seqs), device=device), lens - 1] = 0
    w = w / w.sum(1, keepdim=True)
    return torch.einsum("lbsd,bs->lbd", torch.stack(hs), w)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model_dir")
    p.add_argument("ids")
    p.add_argument("offsets")
    p.add_argument("batches")
    p.add_argument("batch_offsets")
    p.add_argument("out")
    add_shape_flags(p)
    p.add_argument("--fixed-batch", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--pretrained", action="store_true")
    p.add_argument("--repeats", type=int, default=1)
    a = p.parse_args()
    device = torch.device(a.device)
    if a.pretrained:
        torch.set_num_threads(a.threads)
        bert = AutoModel.from_pretrained(a.model_dir, attn_implementation="sdpa", add_pooling_layer=False)
        bert = bert.to(torch.float32).eval().to(device)
        attn = bert.config._attn_implementation
    else:
        model = random_bert(a).eval()
        bert = model.bert.to(device)
        attn = model.config._attn_implementation

    ids, offsets = np.load(a.ids), np.load(a.offsets)
    seqs = [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    rows, boffs = np.load(a.batches), np.load(a.batch_offsets)
    batches = [rows[boffs[i] : boffs[i + 1]] for i in range(len(boffs) - 1)]
    n, tokens = len(seqs), int(sum(len(s) for s in seqs))

    out = torch.zeros((a.layers + 1, n, a.hidden), dtype=torch.float32)
    with torch.inference_mode():
        pooled(bert, [seqs[i] for i in batches[0]], device)  # untimed warm-up
        sync(device)
        same_runs = []
        for _ in range(max(a.repeats, 1)):
            t0 = time.perf_counter()
            for b in batches:
                out[:, torch.from_numpy(b)] = pooled(bert, [seqs[i] for i in b], device).cpu()
            sync(device)
            same_runs.append(time.perf_counter() - t0)
        same = min(same_runs)

        fixed = [list(range(i, min(i + a.fixed_batch, n))) for i in range(0, n, a.fixed_batch)]
        pooled(bert, [seqs[i] for i in fixed[0]], device)
        sync(device)
        t0 = time.perf_counter()
        for b in fixed:
            pooled(bert, [seqs[i] for i in b], device).cpu()
        sync(device)
        naive = time.perf_counter() - t0
    np.save(a.out, out.numpy())
    print(json.dumps({
        "same_batches_seconds": same, "same_batches_runs": same_runs,
        "fixed_batches_seconds": naive, "fixed_batch": a.fixed_batch,
        "sentences": n, "tokens": tokens, "threads": torch.get_num_threads(),
        "attn_implementation": attn, "torch": torch.__version__, "transformers": transformers.__version__,
    }))


if __name__ == "__main__":
    main()
