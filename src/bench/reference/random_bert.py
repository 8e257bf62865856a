"""Shared by the benchmark references (bench_features.py, bench_finetune.py): the shape flags crossling passes
(`model_flags` in src/cli/bench_features.rs) and the seeded, randomly initialised `BertForMaskedLM` they describe
(SDPA attention), saved with `save_pretrained` so crossling imports that very folder.
"""
import torch
from transformers import BertConfig, BertForMaskedLM

SHAPE_FLAGS = ["layers", "hidden", "heads", "ffn", "vocab", "max_positions", "threads", "seed"]


def add_shape_flags(parser):
    """Adds the required integer flags --layers … --seed of SHAPE_FLAGS."""
    for name in SHAPE_FLAGS:
        parser.add_argument("--" + name.replace("_", "-"), type=int, required=True)


def random_bert(a):
    """Sets the threads, seeds torch with a.seed, builds the model of a's shape, saves it to a.model_dir, returns it."""
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cfg = BertConfig(
        vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
        intermediate_size=a.ffn, max_position_embeddings=a.max_positions, hidden_act="gelu",
        layer_norm_eps=1e-12, pad_token_id=0, type_vocab_size=2,
    )
    cfg._attn_implementation = "sdpa"
    model = BertForMaskedLM(cfg)
    model.save_pretrained(a.model_dir, safe_serialization=True)
    return model
