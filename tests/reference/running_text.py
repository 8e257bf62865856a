"""Reference encodings of running text for tests/hf_tokenizers.rs and tests/e5_word_inputs.rs: what `transformers` gives for a sentence written
out whole, to compare with crossling's word-by-word encoding of the same gold words.

    running_text.py JOB.json OUT.json   JOB = {"model": folder, "texts": [str, ...]}; OUT = [{"ids": [...],
                                        "offsets": [[start, end], ...]}, ...]: AutoTokenizer's ids of each text
                                        without special tokens and each id's character span in the text.
Run with .venv/bin/python (transformers; ./setup.sh installs it).
"""
import json
import sys

from transformers import AutoTokenizer


def main():
    job_path, out_path = sys.argv[1], sys.argv[2]
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    tok = AutoTokenizer.from_pretrained(job["model"])
    out = []
    for text in job["texts"]:
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        out.append({"ids": enc["input_ids"], "offsets": [list(o) for o in enc["offset_mapping"]]})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
