"""Reference outputs of Hugging Face `transformers` BERT masked LMs for tests/hf_interop.rs.

    hf_bert.py create DIR      a tiny random BertForMaskedLM (seed 0: vocab 100 WordPiece, hidden 32, 2 layers,
                               4 heads, intermediate 64, 64 positions) saved twice: DIR/st (model.safetensors)
                               and DIR/bin (the same weights as a PyTorch pickle pytorch_model.bin), each with
                               config.json, vocab.txt and tokenizer_config.json; tokenizer.json only in DIR/st.
    hf_bert.py run JOB.json    for each job {"model", "inputs", "out", "sentences"?, "tokens_out"?}: load the
                               folder with AutoModelForMaskedLM (any missing or unexpected key is an error), run
                               it in eval mode on inputs.safetensors (input_ids, attention_mask: [batch, seq] i64)
                               and write out.safetensors: hidden_states [L+1, batch, seq, hidden] and logits
                               [batch, seq, vocab] (f32); with "sentences", also write the ids AutoTokenizer gives
                               each sentence (special tokens added) to tokens_out as JSON.
Run with .venv/bin/python (transformers 5.23, torch 2.13, safetensors 0.8; ./setup.sh installs them).
"""
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForMaskedLM, AutoTokenizer, BertConfig, BertForMaskedLM, BertTokenizerFast

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "house", "le", "chat", "sur", "un", "chien"]
PIECES = ["##s", "##ed", "##ing", "##er", "##e", "##t", "##a", "##n"]


def vocab():
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?-'")
    toks = SPECIALS + WORDS + PIECES + chars + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    seen, out = set(), []
    for t in toks:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out[:100]


def create(root):
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=64, type_vocab_size=2, pad_token_id=0)
    model = BertForMaskedLM(cfg).eval()
    with torch.no_grad():  # non-trivial LayerNorm and biases, so a mis-mapped tensor shows
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.1 * torch.randn_like(p))
    for sub in ["st", "bin"]:
        d = os.path.join(root, sub)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab()) + "\n")
        tok = BertTokenizerFast(vocab_file=os.path.join(d, "vocab.txt"), do_lower_case=True)
        tok.save_pretrained(d)
        model.save_pretrained(d)
    binary = os.path.join(root, "bin")
    os.remove(os.path.join(binary, "model.safetensors"))
    os.remove(os.path.join(binary, "tokenizer.json"))  # the .bin copy keeps only vocab.txt (WordPiece path)
    torch.save(model.state_dict(), os.path.join(binary, "pytorch_model.bin"))


def run(job_file):
    with open(job_file) as f:
        jobs = json.load(f)
    for job in jobs:
        model, info = AutoModelForMaskedLM.from_pretrained(job["model"], output_loading_info=True)
        bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
        if bad:
            sys.exit(f"{job['model']}: transformers reports {bad}")
        model.eval()
        inputs = load_file(job["inputs"])
        with torch.no_grad():
            out = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                        output_hidden_states=True)
        save_file({"hidden_states": torch.stack(out.hidden_states).float().contiguous(),
                   "logits": out.logits.float().contiguous()}, job["out"])
        if "sentences" in job:
            tok = AutoTokenizer.from_pretrained(job["model"])
            ids = [tok(s)["input_ids"] for s in job["sentences"]]
            with open(job["tokens_out"], "w") as f:
                json.dump(ids, f)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("create", "run"):
        sys.exit(__doc__)
    (create if sys.argv[1] == "create" else run)(sys.argv[2])
