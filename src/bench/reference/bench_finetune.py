"""PyTorch reference for `crossling bench finetune`: NLI fine-tuning steps of a BERT encoder + [CLS] classifier.

Creates a randomly initialised `BertForMaskedLM` of the given shape (seeded, SDPA attention), saves it with
`save_pretrained` to MODEL_DIR (crossling then imports that very folder), and a classifier `nn.Linear(hidden, 3)`
initialised as BERT's (weights N(0, 0.02²), bias 0), saved to HEAD_WEIGHT.npy / HEAD_BIAS.npy so that crossling
starts from the same head. The task model is `model.bert` (no pooler) and the classifier on the final layer's first
position with dropout (the model's hidden dropout) before it — crossling's `NliClassifier`.

One step = pad the batch to its longest pair (pad id 0, attention mask) + forward (dropout on) + cross-entropy +
`zero_grad` + backward + `clip_grad_norm_(…, CLIP)` + `torch.optim.Adam` (β 0.9/0.999, ε 1e-8, no weight decay,
fixed LR) + `loss.item()`, over the parameters of `model.bert` and the classifier (the MLM head does not train).
The batches are consecutive slices of the pairs in IDS.npy / OFFSETS.npy / LABELS.npy, BATCH pairs each:
`--check` steps first with dropout off (their losses and gradient norms are compared with crossling's: same
weights, same batches), then `--warmup` untimed steps and `--steps` timed steps, dropout on. Prints one JSON line
with the timings, CPU seconds (`time.process_time`), losses and versions.

With `--pretrained` MODEL_DIR is an existing BERT folder (e.g. crossling's e5-small), loaded with
`AutoModel.from_pretrained` (SDPA attention, no pooler), its embeddings frozen, instead of a random model.

Usage: bench_finetune.py MODEL_DIR HEAD_WEIGHT.npy HEAD_BIAS.npy IDS.npy OFFSETS.npy LABELS.npy --layers L
       --hidden D --heads H --ffn F --vocab V --max-positions P --threads T --seed S --batch B --check C
       --warmup W --steps N --lr LR [--clip 1.0] [--device cpu] [--pretrained]
"""

import argparse
import json
import time

import numpy as np
import torch
import transformers
from torch import nn
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


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    p = argparse.ArgumentParser()
    for name in ["model_dir", "head_weight", "head_bias", "ids", "offsets", "labels"]:
        p.add_argument(name)
    add_shape_flags(p)
    for name in ["batch", "check", "warmup", "steps"]:
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--pretrained", action="store_true")
    a = p.parse_args()
    device = torch.device(a.device)
    if a.pretrained:
        torch.set_num_threads(a.threads)
        torch.manual_seed(a.seed)
        bert = AutoModel.from_pretrained(a.model_dir, attn_implementation="sdpa", add_pooling_layer=False)
        bert = bert.to(torch.float32)
        bert.embeddings.requires_grad_(False)
        config = bert.config
    else:
        model = random_bert(a)
        bert, config = model.bert, model.config
    head = nn.Linear(a.hidden, 3)
    with torch.no_grad():
        head.weight.normal_(0.0, 0.02)
        head.bias.zero_()
    np.save(a.head_weight, head.weight.detach().numpy())
    np.save(a.head_bias, head.bias.detach().numpy())

    bert, head = bert.to(device), head.to(device)
    dropout = nn.Dropout(config.hidden_dropout_prob)
    params = [q for q in bert.parameters() if q.requires_grad] + list(head.parameters())
    opt = torch.optim.Adam(params, lr=a.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)

    ids, offsets, labels = np.load(a.ids), np.load(a.offsets), np.load(a.labels)
    seqs = [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    n_batches = a.check + a.warmup + a.steps
    if len(seqs) < n_batches * a.batch:
        raise SystemExit(f"{len(seqs)} pairs, {n_batches} batches of {a.batch} need more")
    batches = [(seqs[i * a.batch : (i + 1) * a.batch], labels[i * a.batch : (i + 1) * a.batch])
               for i in range(n_batches)]

    def step(rows, y, train):
        bert.train(train)
        dropout.train(train)
        x, mask = padded(rows, device)
        y = torch.from_numpy(y).to(device)
        last = bert(input_ids=x, attention_mask=mask).last_hidden_state  # [batch, seq, hidden]
        loss = nn.functional.cross_entropy(head(dropout(last[:, 0])), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, a.clip)
        opt.step()
        return loss.item(), norm.item()

    check = [step(rows, y, False) for rows, y in batches[: a.check]]
    for rows, y in batches[a.check : a.check + a.warmup]:
        step(rows, y, True)
    sync(device)
    losses, times = [], []
    t0, c0 = time.perf_counter(), time.process_time()
    for rows, y in batches[a.check + a.warmup :]:
        s = time.perf_counter()
        losses.append(step(rows, y, True)[0])
        sync(device)
        times.append(time.perf_counter() - s)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({
        "seconds": seconds, "cpu_seconds": cpu, "step_seconds": times, "losses": losses,
        "check_losses": [c[0] for c in check], "check_grad_norms": [c[1] for c in check],
        "threads": torch.get_num_threads(), "attn_implementation": config._attn_implementation,
        "trainable_parameters": sum(q.numel() for q in params),
        "torch": torch.__version__, "transformers": transformers.__version__,
    }))


if __name__ == "__main__":
    main()
