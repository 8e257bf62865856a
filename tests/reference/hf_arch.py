"""Reference models and outputs of Hugging Face `transformers` for tests/hf_architectures.rs: every architecture
crossling reads (BERT, RoBERTa, XLM-R, DistilBERT, ELECTRA) in every layout and weight-file format.

    hf_arch.py create SUITE DIR SENTENCES.txt
                                  tiny randomly initialised models (seed 0: 2 layers, hidden 32, 4 heads,
                                  intermediate 64, 64 positions; biases and LayerNorms perturbed so a mis-mapped
                                  tensor shows) of the classes of SUITE, each with its tokenizer, saved by
                                  `save_pretrained` into DIR/<class>-<format>, and DIR/folders.json listing them
                                  ({"name", "class", "format", "mlm"}). Formats: st (model.safetensors), sharded
                                  (model-0000N-of-0000M.safetensors + model.safetensors.index.json, max_shard_size
                                  20KB), bin (torch.save of the state dict: pytorch_model.bin), bin-sharded
                                  (pytorch_model-0000N-of-0000M.bin + pytorch_model.bin.index.json), bin-legacy
                                  (pytorch_model.bin in torch.save's pre-1.6 format, as old hub checkpoints such as
                                  bert-base-multilingual-cased's).
                                  Suites: bert (BertForMaskedLM in every format), bert-model, bert-pretraining
                                  (st and bin-legacy, mBERT's hub layout),
                                  bert-tasks (the five BERT task heads), roberta, xlm-roberta, distilbert, electra
                                  (…ForMaskedLM in st / sharded / bin, …Model and …ForSequenceClassification in st;
                                  ELECTRA: the discriminator ElectraForPreTraining in st / sharded / bin, ElectraModel,
                                  ElectraForMaskedLM (the generator head), ElectraForSequenceClassification),
                                  distilbert-legacy (DistilBertForMaskedLM in bin-legacy).
                                  Then each saved folder is loaded back from disk as the class of its config.json
                                  (any missing, unexpected or mismatched key is an error) in eval mode with
                                  AutoTokenizer, and for line i of SENTENCES.txt DIR/<name>.reference.safetensors gets
                                  ids_i (AutoTokenizer's ids, specials added), hidden_i [L+1, tokens, hidden] (the
                                  encoder's hidden states, one unpadded sentence per forward pass) and, for a model
                                  with a masked-LM head, logits_i [tokens, vocab]. One process per suite: importing
                                  transformers takes seconds.

Tokenizers are trained here with the `tokenizers` package on a small five-language text (nothing can be downloaded):
a cased WordPiece for BERT (tokenizer.json; the bin formats keep only vocab.txt), an uncased WordPiece for
DistilBERT and ELECTRA, a byte-level BPE for RoBERTa (RobertaTokenizer) and a Metaspace Unigram for XLM-R
(XLMRobertaTokenizer), each wrapped in its transformers class and saved with the model.
Run with .venv/bin/python (transformers 5.23, tokenizers 0.23, torch 2.13, safetensors 0.8).
"""
import json
import os
import shutil
import sys

import torch
import transformers as T
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

CORPUS = {
    "en": ["The cat sat on the mat.", "A dog ran to the house and the children laughed.",
           "Language models learn structure from text.", "We read books every day in the library.",
           "The weather is nice today, isn't it?", "Paris and Berlin are large cities."],
    "fr": ["Le chat est assis sur le tapis.", "Un chien court vers la maison et les enfants rient.",
           "Les modèles de langue apprennent la structure du texte.", "Nous lisons des livres chaque jour.",
           "Il fait beau aujourd'hui, n'est-ce pas ?", "Où est la bibliothèque près de la forêt ?"],
    "de": ["Die Katze sitzt auf der Matte.", "Ein Hund läuft zum Haus und die Kinder lachen.",
           "Sprachmodelle lernen Struktur aus Text.", "Wir lesen jeden Tag Bücher in der Bibliothek.",
           "Das Wetter ist heute schön, nicht wahr?", "Die Straße führt über die große Brücke."],
    "ru": ["Кошка сидит на коврике.", "Собака бежит к дому, и дети смеются.",
           "Языковые модели изучают структуру текста.", "Мы читаем книги каждый день в библиотеке.",
           "Сегодня хорошая погода, не так ли?", "Москва и Берлин большие города."],
    "zh": ["猫坐在垫子上。", "一只狗跑向房子，孩子们笑了。", "语言模型从文本中学习结构。",
           "我们每天在图书馆看书。", "今天天气很好，不是吗？", "北京和柏林是大城市。"],
}
TEXT = [s for lines in CORPUS.values() for s in lines] * 3
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SHAPE = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64,
             max_position_embeddings=64)


def wordpiece(lowercase):
    """A WordPiece vocabulary (token → id) trained with BERT's normalizer and pre-tokenizer."""
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(lowercase=lowercase, strip_accents=None, clean_text=True, handle_chinese_chars=True)
    tok.train_from_iterator(TEXT, vocab_size=400, min_frequency=1, special_tokens=BERT_SPECIALS)
    return {t: i for i, (t, _) in enumerate(sorted(tok.get_vocab().items(), key=lambda kv: kv[1]))}


def make_tokenizer(arch, d):
    """The tokenizer of arch saved in d; returns its vocabulary size."""
    os.makedirs(d, exist_ok=True)
    if arch in ("bert", "distilbert", "electra"):
        cls = {"bert": T.BertTokenizer, "distilbert": T.DistilBertTokenizer, "electra": T.BertTokenizer}[arch]
        # transformers 5 takes the vocabulary itself (`vocab_file=` would be ignored, leaving only the specials)
        vocab = wordpiece(lowercase=arch != "bert")
        tok = cls(vocab=vocab, do_lower_case=arch != "bert")
        with open(os.path.join(d, "vocab.txt"), "w") as f:  # as BERT checkpoints ship it (save_pretrained does not)
            f.write("\n".join(sorted(vocab, key=vocab.get)) + "\n")
    elif arch == "roberta":
        bpe = Tokenizer(models.BPE())
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        bpe.train_from_iterator(TEXT, trainer)
        model = json.loads(bpe.to_str())["model"]
        tok = T.RobertaTokenizer(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]])
    elif arch == "xlm-roberta":
        uni = Tokenizer(models.Unigram())
        uni.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                          unk_token="<unk>")
        uni.train_from_iterator(TEXT, trainer)
        vocab = [tuple(p) for p in json.loads(uni.to_str())["model"]["vocab"]] + [("<mask>", 0.0)]
        tok = T.XLMRobertaTokenizer(vocab=vocab)
    else:
        raise ValueError(arch)
    tok.save_pretrained(d)
    assert len(tok) > 200, f"{arch}: the tokenizer has only {len(tok)} tokens"
    return len(tok)


def config(arch, vocab):
    if arch == "bert":
        return T.BertConfig(vocab_size=vocab, type_vocab_size=2, pad_token_id=0, **SHAPE)
    if arch == "roberta":
        return T.RobertaConfig(vocab_size=vocab, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                               **{**SHAPE, "max_position_embeddings": 66})
    if arch == "xlm-roberta":
        return T.XLMRobertaConfig(vocab_size=vocab, type_vocab_size=1, pad_token_id=1, bos_token_id=0,
                                  eos_token_id=2, layer_norm_eps=1e-5, **{**SHAPE, "max_position_embeddings": 66})
    if arch == "distilbert":
        return T.DistilBertConfig(vocab_size=vocab, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                  max_position_embeddings=64, pad_token_id=0)
    if arch == "electra":
        return T.ElectraConfig(vocab_size=vocab, embedding_size=32, type_vocab_size=2, pad_token_id=0, **SHAPE)
    raise ValueError(arch)


def perturbed(model):
    with torch.no_grad():  # non-trivial LayerNorms and biases, so a mis-mapped tensor shows
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def save(model, arch, tokenizer_dir, d, fmt):
    shutil.copytree(tokenizer_dir, d)
    if fmt == "st":
        model.save_pretrained(d)
    elif fmt == "sharded":
        model.save_pretrained(d, max_shard_size="20KB")
        assert os.path.isfile(os.path.join(d, "model.safetensors.index.json")), os.listdir(d)
    elif fmt in ("bin", "bin-sharded", "bin-legacy"):
        model.save_pretrained(d)
        os.remove(os.path.join(d, "model.safetensors"))
        state = model.state_dict()  # with tied copies (e.g. cls.predictions.decoder.weight), as old checkpoints
        if fmt in ("bin", "bin-legacy"):
            torch.save(state, os.path.join(d, "pytorch_model.bin"), _use_new_zipfile_serialization=fmt == "bin")
        else:
            names = list(state)
            half = len(names) // 2
            shards = {"pytorch_model-00001-of-00002.bin": names[:half], "pytorch_model-00002-of-00002.bin": names[half:]}
            weight_map = {}
            for shard, keys in shards.items():
                torch.save({k: state[k] for k in keys}, os.path.join(d, shard))
                weight_map.update({k: shard for k in keys})
            with open(os.path.join(d, "pytorch_model.bin.index.json"), "w") as f:
                json.dump({"metadata": {}, "weight_map": weight_map}, f)
        if arch == "bert":  # the pickle copies keep only vocab.txt: crossling's WordPiece-from-vocab path
            os.remove(os.path.join(d, "tokenizer.json"))
    else:
        raise ValueError(fmt)


def has_mlm_head(cls_name):
    return cls_name.endswith("ForMaskedLM") or cls_name == "BertForPreTraining"


SUITES = {
    "bert": [("BertForMaskedLM", f) for f in ("st", "sharded", "bin", "bin-sharded")],
    "bert-model": [("BertModel", "st"), ("BertModel", "bin")],
    "bert-pretraining": [("BertForPreTraining", "st"), ("BertForPreTraining", "bin-legacy")],
    "bert-tasks": [(c, "st") for c in ("BertForSequenceClassification", "BertForTokenClassification",
                                         "BertForQuestionAnswering", "BertForMultipleChoice",
                                         "BertForNextSentencePrediction")],
}
for _arch, _prefix in (("roberta", "Roberta"), ("xlm-roberta", "XLMRoberta"), ("distilbert", "DistilBert")):
    SUITES[_arch] = [(_prefix + "ForMaskedLM", f) for f in ("st", "sharded", "bin")] + [
        (_prefix + "Model", "st"), (_prefix + "ForSequenceClassification", "st")]
SUITES["electra"] = [("ElectraForPreTraining", f) for f in ("st", "sharded", "bin")] + [
    ("ElectraModel", "st"), ("ElectraForMaskedLM", "st"), ("ElectraForSequenceClassification", "st")]
SUITES["distilbert-legacy"] = [("DistilBertForMaskedLM", "bin-legacy")]
ARCH_OF = {"distilbert-legacy": "distilbert", "bert": "bert", "bert-model": "bert", "bert-pretraining": "bert", "bert-tasks": "bert",
           "roberta": "roberta", "xlm-roberta": "xlm-roberta", "distilbert": "distilbert", "electra": "electra"}


def create(suite, root, sentences_file):
    arch = ARCH_OF[suite]
    vocab = make_tokenizer(arch, os.path.join(root, "_tokenizer"))
    folders = []
    for i, (cls_name, fmt) in enumerate(SUITES[suite]):
        torch.manual_seed(i)
        model = perturbed(getattr(T, cls_name)(config(arch, vocab)))
        name = f"{cls_name}-{fmt}"
        save(model, arch, os.path.join(root, "_tokenizer"), os.path.join(root, name), fmt)
        folders.append({"name": name, "class": cls_name, "format": fmt, "mlm": has_mlm_head(cls_name)})
    with open(os.path.join(root, "folders.json"), "w") as f:
        json.dump(folders, f, indent=1)
    with open(sentences_file, encoding="utf-8") as f:
        sentences = f.read().splitlines()
    for folder in folders:
        name = folder["name"]
        reference(os.path.join(root, name), sentences, os.path.join(root, f"{name}.reference.safetensors"))


def reference(model_dir, sentences, out_file):
    with open(os.path.join(model_dir, "config.json")) as f:
        cls_name = json.load(f)["architectures"][0]
    model, info = getattr(T, cls_name).from_pretrained(model_dir, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if bad:
        sys.exit(f"{model_dir}: transformers reports {bad}")
    model.eval()
    tok = T.AutoTokenizer.from_pretrained(model_dir)
    out = {}
    for i, s in enumerate(sentences):
        ids = torch.tensor([tok(s)["input_ids"]])
        mask = torch.ones_like(ids)
        with torch.no_grad():
            enc = model.base_model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            out[f"hidden_{i}"] = torch.stack(enc.hidden_states)[:, 0].float().contiguous()
            if has_mlm_head(cls_name):
                o = model(input_ids=ids, attention_mask=mask)
                logits = o.prediction_logits if cls_name == "BertForPreTraining" else o.logits
                out[f"logits_{i}"] = logits[0].float().contiguous()
        out[f"ids_{i}"] = ids[0].long().contiguous()
    save_file(out, out_file)

if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "create" and sys.argv[2] in SUITES:
        create(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
