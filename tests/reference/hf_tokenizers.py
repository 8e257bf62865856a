"""Reference ids and hidden states of `transformers` for tests/hf_tokenizers.rs: folders whose tokenizer.json differs
from what transformers encodes with in the ways real checkpoints do.

    hf_tokenizers.py create DIR   a tiny random BertModel (seed 0: hidden 32, 2 layers, 4 heads) saved in five
                                  folders, each with its own tokenizer files:
                                  st      sentence-transformers style: tokenizer.json carries "padding" (Fixed 128)
                                          and "truncation" (128) blocks;
                                  added   added tokens, special ([E1]) and not (<ent>, "new york");
                                  cased   tokenizer.json lowercase = false, tokenizer_config.json without
                                          do_lower_case (transformers lowercases: BertTokenizer's default);
                                  pair    a post-processor with another pair template ([CLS] A [SEP] [SEP] B [SEP])
                                          and tokenizer_class PreTrainedTokenizerFast (read as the file says);
                                  xlmr    an XLM-R-style Unigram tokenizer (Precompiled-free, Metaspace) with
                                          tokenizer_class XLMRobertaTokenizer and specials <s> </s> <pad> <unk> <mask>.
    hf_tokenizers.py run JOB.json for each job {"model", "sentences", "pairs", "out"}: AutoTokenizer's ids of each
                                  sentence and of each pair (special tokens added) into out.json, and AutoModel's
                                  hidden states of each sentence alone (no padding) into out.safetensors as
                                  h{i}: [L+1, seq, hidden] f32.
Run with .venv/bin/python (transformers 5.23, tokenizers, torch; ./setup.sh installs them).
"""
import json
import os
import sys

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel, BertTokenizerFast, PreTrainedTokenizerFast

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "house", "le", "chat", "sur", "un", "chien",
         "The", "Cat", "Paris", "é", "new", "york"]
PIECES = ["##s", "##ed", "##ing", "##er", "##e", "##t", "##a", "##n"]


def vocab():
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?-'")
    toks = SPECIALS + WORDS + PIECES + chars + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    seen, out = set(), []
    for t in toks:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out[:120]


def model(vocab_size):
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=160, type_vocab_size=2, pad_token_id=0)
    m = BertModel(cfg, add_pooling_layer=False).eval()
    with torch.no_grad():  # non-trivial LayerNorm and biases, so a mis-mapped tensor shows
        for name, p in m.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return m


def edit_json(path, fn):
    with open(path) as f:
        j = json.load(f)
    fn(j)
    with open(path, "w") as f:
        json.dump(j, f, ensure_ascii=False)


def bert_folder(d, vocab_size=120, **kw):
    os.makedirs(d, exist_ok=True)
    v = vocab()
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(v)}, **kw)
    tok.save_pretrained(d)
    return tok


def create(root):
    # st: padding and truncation baked into tokenizer.json, as sentence-transformers saves them.
    d = os.path.join(root, "st")
    bert_folder(d, do_lower_case=True)
    def pad(j):
        j["padding"] = {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
                        "pad_type_id": 0, "pad_token": "[PAD]"}
        j["truncation"] = {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0}
    edit_json(os.path.join(d, "tokenizer.json"), pad)
    model(120).save_pretrained(d)

    # added: added tokens, special and not.
    d = os.path.join(root, "added")
    tok = bert_folder(d, do_lower_case=True)
    tok.add_tokens(["<ent>", "new york"])
    tok.add_special_tokens({"additional_special_tokens": ["[E1]"]})
    tok.save_pretrained(d)
    model(len(tok)).save_pretrained(d)

    # cased: the file says lowercase = false, the config says nothing (transformers' default is true).
    d = os.path.join(root, "cased")
    bert_folder(d, do_lower_case=False)
    edit_json(os.path.join(d, "tokenizer_config.json"), lambda j: j.pop("do_lower_case", None))
    model(120).save_pretrained(d)

    # pair: another template, read as the file says (PreTrainedTokenizerFast).
    d = os.path.join(root, "pair")
    bert_folder(d, do_lower_case=True)
    def template(j):
        j["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}}
    edit_json(os.path.join(d, "tokenizer.json"), template)
    edit_json(os.path.join(d, "tokenizer_config.json"),
              lambda j: j.update({"tokenizer_class": "PreTrainedTokenizerFast"}))
    model(120).save_pretrained(d)

    # xlmr: a Unigram tokenizer with XLM-R's specials, class XLMRobertaTokenizer.
    d = os.path.join(root, "xlmr")
    os.makedirs(d, exist_ok=True)
    pieces = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    for i, w in enumerate(["▁the", "▁cat", "▁sat", "▁on", "▁le", "▁chat", "s", "▁", "t", "h", "e", "c", "a", "o",
                           "n", "l", "r", "u", ".", "▁un", "▁chien", "i", "d", "g", "m", "p", "▁Paris", "P"]):
        pieces.append((w, -1.0 - 0.1 * i))
    pieces.append(("<mask>", 0.0))
    t = Tokenizer(models.Unigram(pieces, unk_id=3, byte_fallback=False))
    t.normalizer = normalizers.Sequence([normalizers.Replace("``", '"'), normalizers.Lowercase()])
    t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    t.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B </s>",
                                                     special_tokens=[("<s>", 0), ("</s>", 2)])
    t.save(os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "XLMRobertaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
                   "cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
                   "mask_token": "<mask>"}, f)
    m = model(len(pieces))
    m.config.pad_token_id = 1
    m.save_pretrained(d)


def run(job_file):
    with open(job_file) as f:
        jobs = json.load(f)
    for job in jobs:
        tok = AutoTokenizer.from_pretrained(job["model"])
        m = AutoModel.from_pretrained(job["model"]).eval()
        ids = [tok(s)["input_ids"] for s in job["sentences"]]
        pairs = [tok(a, b)["input_ids"] for a, b in job["pairs"]]
        with open(job["out"] + ".json", "w") as f:
            json.dump({"ids": ids, "pairs": pairs, "class": type(tok).__name__}, f)
        hidden = {}
        with torch.no_grad():
            for i, row in enumerate(ids):
                out = m(input_ids=torch.tensor([row]), output_hidden_states=True)
                hidden[f"h{i}"] = torch.stack([h[0] for h in out.hidden_states]).contiguous()
        save_file(hidden, job["out"] + ".safetensors")


if __name__ == "__main__":
    {"create": create, "run": run}[sys.argv[1]](sys.argv[2])
