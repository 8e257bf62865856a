"""PyTorch eager reference for `crossling bench train`: MLM training steps of Hugging Face `BertForMaskedLM`.

The same model as crossling's encoder (post-LN BERT, tied output softmax, GELU, dropout 0.1, LayerNorm eps 1e-12,
SDPA attention); with `--pre-ln`, Hugging Face `RobertaPreLayerNormForMaskedLM` instead, the pre-LN form of the same
blocks as crossling's pre-LN encoder (embedding LayerNorm, LayerNorm on each sub-block's input, a final LayerNorm
after the last layer, the same MLM head; RoBERTa's position ids start after its padding id, so it gets two more
position rows, which cost no FLOPs). The same batch and sequence length, BERT masking at the same rate (15% by default,
80/10/10), Adam (beta 0.9/0.999, eps 1e-8) with global gradient-norm clipping at 1.0, one step = forward + loss +
backward + clip + Adam + `loss.item()` (crossling also reads the loss back every step). Batches are random ids drawn
before timing; warm-up steps are not timed. fp32 by default; `--bf16` runs the forward pass under CUDA bf16 autocast.
HF's BERT also has a 2-row token-type embedding that crossling lacks (no FLOPs worth counting).

Run with the project's venv: `.venv/bin/python src/bench/reference/bench_train.py --layers 4 --hidden 256 ...`;
prints one JSON object (tokens_per_s, step_seconds, losses, versions) on stdout.
"""

import argparse
import json
import time

import torch
import transformers
from transformers import BertConfig, BertForMaskedLM, RobertaPreLayerNormConfig, RobertaPreLayerNormForMaskedLM


def masked_batch(gen, batch, seq, vocab, mask_prob, n_special, mask_id, device):
    """Random ids in [n_special, vocab); BERT masking with an exact count of round(mask_prob * tokens) positions."""
    ids = torch.randint(n_special, vocab, (batch, seq), generator=gen)
    labels = torch.full_like(ids, -100)
    n = ids.numel()
    k = max(1, round(mask_prob * n))
    sel = torch.randperm(n, generator=gen)[:k]
    flat_ids, flat_labels = ids.view(-1), labels.view(-1)
    flat_labels[sel] = flat_ids[sel]
    r = torch.rand(k, generator=gen)
    repl = flat_ids[sel].clone()
    repl[r < 0.8] = mask_id
    rand_pos = (r >= 0.8) & (r < 0.9)
    repl[rand_pos] = torch.randint(n_special, vocab, (int(rand_pos.sum()),), generator=gen)
    flat_ids[sel] = repl
    return ids.to(device), labels.to(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--ffn", type=int, required=True)
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--max-positions", type=int, default=512)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--mask-prob", type=float, default=0.15)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--pre-ln", action="store_true", help="pre-LN blocks (RobertaPreLayerNormForMaskedLM)")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast for the forward pass (CUDA only)")
    ap.add_argument(
        "--foreach",
        choices=["auto", "on", "off"],
        default="auto",
        help="multi-tensor (foreach) kernels in Adam and clipping: PyTorch's default (auto: on for CUDA), or forced; "
        "off issues kernels parameter by parameter, as crossling does",
    )
    a = ap.parse_args()
    foreach = {"auto": None, "on": True, "off": False}[a.foreach]

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    if a.bf16 and device.type != "cuda":
        raise SystemExit("--bf16 needs a CUDA device")
    shape = dict(
        vocab_size=a.vocab,
        hidden_size=a.hidden,
        num_hidden_layers=a.layers,
        num_attention_heads=a.heads,
        intermediate_size=a.ffn,
        hidden_dropout_prob=a.dropout,
        attention_probs_dropout_prob=a.dropout,
        layer_norm_eps=1e-12,
        hidden_act="gelu",
        tie_word_embeddings=True,
    )
    if a.pre_ln:
        # Ids are drawn from [n_special, vocab), so no position is padding: positions run 2 .. seq + 1.
        cfg = RobertaPreLayerNormConfig(**shape, max_position_embeddings=a.max_positions + 2, type_vocab_size=1)
        model_class = RobertaPreLayerNormForMaskedLM
    else:
        cfg = BertConfig(**shape, max_position_embeddings=a.max_positions)
        model_class = BertForMaskedLM
    cfg._attn_implementation = "sdpa"
    model = model_class(cfg).to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8, foreach=foreach)
    gen = torch.Generator().manual_seed(a.seed)
    n_special, mask_id = 5, 4
    batches = [
        masked_batch(gen, a.batch, a.seq, a.vocab, a.mask_prob, n_special, mask_id, device)
        for _ in range(a.warmup + a.steps)
    ]

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    losses, times = [], []
    for i, (x, y) in enumerate(batches):
        sync()
        t0 = time.perf_counter()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=a.bf16):
            loss = model(input_ids=x, labels=y).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip, foreach=foreach)
        opt.step()
        losses.append(loss.item())
        sync()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    tokens = a.batch * a.seq * len(times)
    print(
        json.dumps(
            {
                "tokens_per_s": tokens / sum(times),
                "step_seconds": times,
                "losses": losses,
                "parameters": sum(p.numel() for p in model.parameters()),
                "attn_implementation": model.config._attn_implementation,
                "model": type(model).__name__,
                "pre_ln": a.pre_ln,
                "threads": torch.get_num_threads(),
                "foreach": a.foreach,
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "device": str(device),
                "precision": "bf16" if a.bf16 else "fp32",
            }
        )
    )


if __name__ == "__main__":
    main()
