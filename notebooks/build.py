#!/usr/bin/env python3
"""Writes the figure notebooks of crossling (one per figure or table) and the index, from the figure registry
(src/figures/registry.rs, read through notebooks/figures.json: `cargo run --release -- figure list --write`).

    .venv/bin/python notebooks/build.py            # (re)write notebooks/*.ipynb
    .venv/bin/python notebooks/build.py --check    # exit 1 when a notebook's cells differ from what this writes

Only ids whose script (scripts/ID.rhai) exists get a notebook; the index lists the others as "no script yet".
A notebook that already exists keeps the outputs of every cell whose source is unchanged (matched by source, not
position), so regenerating after an edit here does not wipe the committed cpu-scale outputs of the other cells.

Every notebook runs its figure through the library (crossling::script::runner::run_script, the function behind
`cargo run -- figure ID`) on the evcxr Rust kernel "crossling-rust" that `./setup.sh --notebooks` registers. The
scale comes from $CROSSLING_SCALE (default cpu); notebooks/check.sh runs them all headless at smoke scale.
Needs nbformat (installed in .venv by ./setup.sh --notebooks).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCRIPTS = ROOT / "scripts"

EMERGING = "Wu, Conneau, Li, Zettlemoyer & Stoyanov (ACL 2020), *Emerging Cross-lingual Structure in Pretrained Language Models*"
LIU = "Liu, Hsu, Chuang & Lee (2020), *A Study of Cross-Lingual Ability and Language-specific Information in Multilingual BERT*"

# The figures come from the registry (src/figures/registry.rs) through notebooks/figures.json, which
# `cargo run --release -- figure list --write` writes and a test keeps current: id, study, reproduces (the figure or
# table of the study), title, tests, claim (what the study argues with it), data, models and budget (the measured
# cost per scale). Nothing about a figure is written here but how its notebook presents it (NOTEBOOK below).
REGISTRY = HERE / "figures.json"

# Per id, only what is about the notebook: paper, a note on where the study's numbers are when the record's `paper`
# field holds them under another script's name (numbers are only quoted from the repository, never typed in here);
# library, the one cell of the figure run again through the library (name, task, preset, pair, language).
TABLE1_PAPER = "The study's Table 1 numbers are in the record's `paper` field (from `scripts/lib/transfer.rhai`)."
NOTEBOOK = {
    "fig3": dict(paper=TABLE1_PAPER),
    "table1": dict(paper=TABLE1_PAPER, library=("NER", "ner", "default", "en-fr", "fr")),
    "table1-synthetic": dict(paper=TABLE1_PAPER),
}


def load_figures():
    """The registry's rows (notebooks/figures.json), each with its notebook's extras."""
    rows = json.loads(REGISTRY.read_text(encoding="utf-8"))
    unknown = sorted(set(NOTEBOOK) - {f["id"] for f in rows})
    if unknown:
        sys.exit(f"build.py: NOTEBOOK names ids the registry lacks: {', '.join(unknown)}")
    return [dict(f, **NOTEBOOK.get(f["id"], {})) for f in rows]


FIGURES = load_figures()


def cpu_time(f):
    """The registry's measured cost at cpu scale."""
    return f["budget"]["cpu"] or "not measured yet"


KERNELSPEC = {"name": "crossling-rust", "display_name": "Rust (crossling)", "language": "rust"}
LANGUAGE_INFO = {"name": "Rust", "file_extension": ".rs", "mimetype": "text/rust", "codemirror_mode": "rust",
                 "pygment_lexer": "rust", "version": ""}


def indented(lines):
    """Each of `lines` four spaces in (empty lines stay empty)."""
    return ["    " + line if line else line for line in lines]


def indent_block(code):
    """`code` inside `{ … };`: evcxr cannot keep variables that borrow (the task context and request) between
    cells, so the library cell runs as one block."""
    body = "\n".join(indented(code.split("\n")))
    return ("{  // one block: evcxr cannot keep variables that borrow (ctx, req) from one cell to the next\n"
            + body + "\n};")


def rust_str(s):
    """`s` as the inside of a Rust string literal used as a format string (println!)."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("{", "{{").replace("}", "}}")


def with_ids(nb, prefix):
    """Stable cell ids (nbformat 4.5 wants one per cell; random ones would rewrite every file on every run)."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:02d}"
    return nb


def study_name(f):
    """The paper a notebook's figure comes from; crossling's own experiments (issue 25) test Emerging's claims."""
    if f["study"] == "Emerging":
        return EMERGING
    if f["study"] == "Liu":
        return LIU
    return f"not a figure of the studies; an experiment of this project on the claims of {EMERGING}"


def imports(script_text):
    """The scripts/lib modules a script imports (lib/common aside: scale helpers only)."""
    libs = re.findall(r'^\s*import\s+"(lib/[^"]+)"', script_text, flags=re.M)
    return [f"{lib}.rhai" for lib in libs if lib != "lib/common"]


def figure_notebook(f):
    fid = f["id"]
    script = SCRIPTS / f"{fid}.rhai"
    libs = imports(script.read_text(encoding="utf-8"))
    paper = f.get("paper") or (f"The numbers that {f['reproduces']} of the paper prints are in the record's `paper` field, "
                               "keyed like ours (or it says `plot only` where the paper only plots); *Our numbers "
                               "and the paper's* below prints them.")
    # What the numbers cell prints when a record has no paper values at all (kept as it was, so the committed outputs
    # of that cell survive regeneration).
    paper_missing = f.get("paper") or f"See {f['reproduces']} of the paper: its numbers are not recorded in this repository."
    cells = []
    cells.append(new_markdown_cell(
        f"# {fid}: {f['title']}\n\n"
        f"**{f['study']} {f['reproduces']}**: {study_name(f)}.\n\n"
        f"**Claim.** {f['claim']}\n\n"
        f"**Data.** {f['data']}. **Models.** {f['models']}.\n\n"
        f"**The paper's numbers.** {paper}\n\n"
        f"**Time at `cpu` scale** (the registry's latest measured run, this project's 2-core machine): {cpu_time(f)}. "
        f"Models are cached, so a second run is much faster.\n\n"
        "The notebook runs `scripts/" + fid + ".rhai` through the library exactly as "
        f"`cargo run --release -- figure {fid}` does. [Index](index.ipynb) explains scales and the model cache."))
    cells.append(new_markdown_cell(
        "## Setup\n\n"
        "The first cell compiles crossling and its dependencies inside the kernel (a few minutes the first time; "
        "seconds once the kernel's build folder `.tools/evcxr-build/` is warm). The scale comes from "
        "`$CROSSLING_SCALE` (`smoke`, `cpu` or `paper`; default `cpu`). At `cpu` the outputs go to the project's "
        "`figures/` (as `cargo run -- figure` does), at other scales to `out/notebooks/SCALE/`; "
        "`$CROSSLING_NOTEBOOK_OUT` overrides both."))
    cells.append(new_code_cell(':dep crossling = { path = ".." }'))
    cells.append(new_code_cell(
        "use std::path::PathBuf;\n"
        "use crossling::figures;\n"
        "use crossling::report::record::FigureRecord;\n"
        "use crossling::report::render::{notebook_display, render_record};\n"
        "use crossling::script::runner::{run_script, RunOptions};\n"
        "\n"
        "/// `p` relative to the project when inside it (so the outputs read the same on every machine).\n"
        "fn shown(project: &std::path::Path, p: &std::path::Path) -> String {\n"
        "    p.strip_prefix(project).unwrap_or(p).display().to_string()\n"
        "}\n"
        "\n"
        f'let id = "{fid}";\n'
        'let scale: crossling::Scale = std::env::var("CROSSLING_SCALE").unwrap_or_else(|_| "cpu".to_string()).parse()?;\n'
        'let project = std::fs::canonicalize("..")?;\n'
        'let out_dir = match std::env::var_os("CROSSLING_NOTEBOOK_OUT") {\n'
        "    Some(dir) => PathBuf::from(dir),\n"
        '    None if scale == crossling::Scale::Cpu => project.join("figures"),\n'
        '    None => project.join("out").join("notebooks").join(scale.name()),\n'
        "};\n"
        'let script = figures::scripts_dir().join(format!("{id}.rhai"));\n'
        'println!("{id} at {scale} scale: {} -> {}", shown(&project, &script), shown(&project, &out_dir));'))
    cells.append(new_markdown_cell(
        "## The experiment\n\n"
        f"The whole experiment is this Rhai script{' and the library modules it imports' if libs else ''}: "
        "data, models (trained on first use, then cached), analyses, and the values, caption and charts of the "
        "record."))
    show = 'println!("{}", std::fs::read_to_string(&script)?);'
    for lib in libs:
        show += (f'\nprintln!("\\n// ===== scripts/{lib} (imported) =====\\n");\n'
                 f'println!("{{}}", std::fs::read_to_string(figures::scripts_dir().join("{lib}"))?);')
    cells.append(new_code_cell(show))
    cells.append(new_markdown_cell(
        "## Run it\n\n"
        f"`run_script` is what `cargo run --release -- figure {fid} --scale $CROSSLING_SCALE` calls: it runs the "
        f"script, writes `{fid}.json` (values, caption, provenance) into the outputs folder and renders the charts "
        "(PNG + SVG) or tables (Markdown + CSV) from it. `$CROSSLING_SEEDS` (default 1) is its `--seeds N`: the "
        "models of each seed are trained (or taken from the cache) and every score is combined over the seeds."))
    cells.append(new_code_cell(
        "let mut opts = RunOptions::figure(scale, out_dir.clone());\n"
        'let device = std::env::var("CROSSLING_DEVICE").unwrap_or_else(|_| "cpu".to_string());\n'
        "opts.compute = crossling::device::Compute::resolve(&device, crossling::device::Precision::Auto)?;\n"
        'opts.seeds = std::env::var("CROSSLING_SEEDS").map_or(Ok(1), |s| s.parse::<usize>())?.max(1);\n'
        "let record: FigureRecord = run_script(&script, id, &opts)?;\n"
        'println!("{}: {} ({:.1} s at {} scale) -> {}", record.id, record.title, record.provenance.wall_time_s,\n'
        '         record.provenance.scale, shown(&project, &out_dir.join(format!("{id}.json"))));'))
    cells.append(new_markdown_cell(
        "## The figure\n\n"
        "Rendered from the record (as `cargo run -- plot` does); `notebook_display` hands each PNG or Markdown table "
        "to Jupyter (evcxr's `EVCXR_BEGIN_CONTENT` protocol)."))
    cells.append(new_code_cell(
        "for file in render_record(&record, &out_dir)? {\n"
        "    match notebook_display(&file)? {\n"
        '        Some(block) => println!("{block}"),\n'
        '        None => println!("also written: {}", shown(&project, &file)),\n'
        "    }\n"
        "};  // the `;` keeps evcxr from also printing the loop's value, ()"))
    cells.append(new_markdown_cell(
        "## The paper's claims and our verdicts\n\n"
        f"The claims of {f['study']} behind {f['reproduces']} as `scripts/{fid}.rhai` tests them: each a predicate over our "
        "scores, which carry 95 % intervals (bootstrap over test items; over seeds with `--seeds N`). A claim is "
        "*supported* when the intervals are apart in the paper's order, *contradicted* when apart the other way, "
        "*inconclusive* when they overlap, when both sides sit at chance, or when a score has no interval "
        "(`src/claims/rule.rs`). `REPRODUCTION.md` gathers every figure's."))
    cells.append(new_code_cell(
        "use crossling::report::render::{claims_markdown, markdown_display};\n"
        'println!("{}", markdown_display(&claims_markdown(&record)?));'))
    if f.get("library"):
        name, task, preset, pair, lang = f["library"]
        kind = {"ner": "Ner", "nli": "Nli", "parse": "Parse"}[task]
        cells.append(new_markdown_cell(
            f"## One cell of {f['reproduces']} through the library\n\n"
            f"The script's `task::run(\"{task}\", model, #{{ langs: [\"{lang}\"] }})` is the library call "
            "`crossling::tasks::run::run_task`, which `crossling task ner | nli | parse` makes too; all three read and "
            f"write one result cache. Here the {name} run on the `{preset}` {pair} model, asked for as the script asks "
            "for it (`train::model(#{ preset, langs })` is `ModelRequest::locate`), comes from that cache and equals "
            "the record's value."))
        cells.append(new_code_cell(indent_block(
            "use crossling::tasks::run::{run_task, ModelFolder, TaskContext, TaskKind, TaskRequest};\n"
            "use crossling::train::request::ModelRequest;\n"
            "let compute = opts.compute;\n"
            "let catalog = crossling::data::manifest::Catalog::load_default()?;\n"
            "let roots = crossling::data::resolve::DataRoots::from_env();\n"
            "let seed = record.provenance.seed;\n"
            f"let located = ModelRequest::new(\"{preset}\", \"{pair}\").locate(scale, seed, &compute, &catalog, &opts.models_dir)?;\n"
            "let model = ModelFolder::new(&located.dir);\n"
            f"let req = TaskRequest {{ task: TaskKind::{kind}, model: &model, langs: Some(vec![\"{lang}\".to_string()]),\n"
            "    overrides: Default::default(), seed: Some(seed), scale, compute, stack: None, train_data: None };\n"
            "let log = |line: String| println!(\"{line}\");\n"
            "let ctx = TaskContext { catalog: &catalog, roots: &roots, models_dir: &opts.models_dir, fresh: false,\n"
            "    cached_only: false, progress: false, log: &log };\n"
            "let out = run_task(&ctx, &req)?;\n"
            f"println!(\"{name} on {preset} {pair}, seed {{seed}}: {lang} {{:.4}}, English dev {{:.4}} (from the cache: {{}})\",\n"
            f"         out.run.scores[\"{lang}\"], out.run.en_dev, out.cached);")))
    cells.append(new_markdown_cell(
        "## Our numbers and the paper's\n\n"
        f"From `{fid}.json`: the caption (scale and every substitution of the study's setup), each value (long ones "
        "cut; the file holds them all), and the paper's values where the script records them."))
    cells.append(new_code_cell(
        'fn short(v: &impl std::fmt::Display) -> String {\n'
        '    let s = v.to_string();\n'
        '    if s.chars().count() > 600 { format!("{}… ({} characters)", s.chars().take(600).collect::<String>(), s.chars().count()) } else { s }\n'
        "}\n"
        'println!("{}\\n", record.caption);\n'
        'println!("ours ({} scale, seed {}):", record.provenance.scale, record.provenance.seed);\n'
        "for (key, value) in &record.values {\n"
        '    println!("  {key}: {}", short(value));\n'
        "}\n"
        "if record.paper.is_empty() {\n"
        f'    println!("\\nthe paper: {rust_str(paper_missing)}");\n'
        "} else {\n"
        '    println!("\\nthe paper:");\n'
        "    for (key, value) in &record.paper {\n"
        '        println!("  {key}: {}", short(value));\n'
        "    }\n"
        "};"))
    cells.append(new_markdown_cell(
        "## How to change the experiment\n\n"
        f"- **Edit the script** `scripts/{fid}.rhai` (or the `scripts/lib/` module it imports) and re-run the "
        "*Run it* and *figure* cells: scripts are read at run time, nothing recompiles. The script's settings per "
        "scale are the `c::by_scale(#{ smoke: …, cpu: …, paper: … })` entries; what the namespaces offer "
        "(`data::`, `train::`, `features::`, `cka::`, `align::`, `retrieve::`, `lang::`, `task::`, `wordvec::`, "
        "`results::`) is in README.md and `src/script/`.\n"
        "- **Keep the original**: copy the script (e.g. to `out/my-"
        f"{fid}.rhai`; `import \"lib/…\"` still resolves in `scripts/`), set "
        f"`let script = project.join(\"out/my-{fid}.rhai\");` and `let out_dir = project.join(\"out/my\");`, and "
        "re-run from *Run it*, so `figures/` keeps the reference outputs.\n"
        "- **Change the run**: `scale` (`smoke` to try a change in seconds, `cpu`, `paper` for a GPU), `seed`, "
        "`compute` (`$CROSSLING_DEVICE=cuda`, or `Compute::resolve(\"cuda\", Precision::Auto)?`), `seeds`, "
        "`fresh: true` (retrain instead of using cached models) in `RunOptions`; "
        "`given_models` takes a Hugging Face BERT folder by name, e.g. "
        "`[(\"mbert\".to_string(), PathBuf::from(\"/models/bert-base-multilingual-cased\"))].into()` for the Liu "
        "scripts that accept one.\n"
        f"- **Same thing from a shell**: `cargo run --release -- figure {fid} --scale smoke`, or "
        "`cargo run --release -- run my.rhai` for a script of your own."))
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})
    return with_ids(nb, fid)


# The records of both studies' analyses on one pretrained encoder (scripts/real/ and liu-table4 with a given model;
# docs/usage/models.md). Per record: its file name, the script, the name the script gives the model, and what of the
# studies it reads.
REAL = [
    ("language", "real/language.rhai", "real",
     "Liu §4.1: means of language per layer and how separable the languages are by layer"),
    ("sentence", "real/sentence.rhai", "real",
     "Emerging §5 at sentence level: Tatoeba retrieval per layer with and without a Procrustes map (Figure 6) and "
     "linear CKA between languages with the random-encoder lower bound (Figure 7)"),
    ("word", "real/word.rhai", "real",
     "Emerging §5.1.2 at word level: contextual word alignment per layer with the MUSE dictionaries (Figure 4's "
     "contextual panel)"),
    ("transfer", "real/transfer.rhai", "real",
     "Emerging Table 1's Default row: zero-shot XNLI, NER and parsing en→fr/de/ru/zh with English dev beside "
     "(the committed record combines 3 fine-tuning seeds: `--seeds 3`)"),
    ("liu-table4", "liu-table4.rhai", "mbert",
     "Liu §4.3, Table 4: the mean-difference shift inside zero-shot XNLI, α chosen on half of dev, the α = 0 row "
     "beside it"),
]


def real_notebook():
    cells = [new_markdown_cell(
        "# Both studies on a pretrained multilingual encoder\n\n"
        f"The analyses of {EMERGING} and of {LIU} that need an encoder alone, run on one pretrained model from the "
        "registry (`crossling models list`; default `e5-small`, set `$CROSSLING_REAL_MODEL` for another name or a "
        "Hugging Face folder). Each section shows a record of `figures/real/MODEL/` with its figure and the "
        "studies' claims with our verdicts, as they read for one pretrained model; REPRODUCTION.md's section "
        "*On pretrained encoders* gathers them. What each record cost is in its provenance and in "
        "[docs/usage/models.md](../docs/usage/models.md).\n\n"
        "By default the notebook reads the committed records, so it runs in seconds; with `$CROSSLING_REAL_RERUN` "
        "set it runs each script again through the library (as `cargo run --release -- run scripts/real/NAME.rhai "
        "--model real=MODEL --out figures/real/MODEL` does; the transfer and Table 4 fine-tunings take hours on two "
        "cores). The model's caveats are printed below: read every number with them.")]
    cells.append(new_code_cell(':dep crossling = { path = ".." }'))
    cells.append(new_code_cell(
        "use std::path::{Path, PathBuf};\n"
        "use crossling::figures;\n"
        "use crossling::model::registry;\n"
        "use crossling::report::record::FigureRecord;\n"
        "use crossling::report::render::{claims_markdown, markdown_display, notebook_display, render_record};\n"
        "use crossling::script::runner::{run_script, RunOptions};\n"
        "\n"
        'let model = std::env::var("CROSSLING_REAL_MODEL").unwrap_or_else(|_| "e5-small".to_string());\n'
        'let rerun = std::env::var_os("CROSSLING_REAL_RERUN").is_some();\n'
        'let scale: crossling::Scale = std::env::var("CROSSLING_SCALE").unwrap_or_else(|_| "cpu".to_string()).parse()?;\n'
        'let project = std::fs::canonicalize("..")?;\n'
        "let name = Path::new(&model).file_name().map_or(model.clone(), |n| n.to_string_lossy().into_owned());\n"
        "let out_dir = match scale {\n"
        '    crossling::Scale::Cpu => project.join("figures").join("real").join(&name),\n'
        '    _ => project.join("out").join("notebooks").join(scale.name()).join("real").join(&name),\n'
        "};\n"
        "if let Ok(e) = registry::entry(&model) {\n"
        '    println!("{}: {}\\nsource: {}\\nlicence: {}\\ncite: {}\\ncaveats: {}", e.name, e.description,\n'
        "             e.source.describe(), e.licence, e.citation, e.caveats);\n"
        "}\n"
        'println!("records: {}", out_dir.strip_prefix(&project).unwrap_or(&out_dir).display());\n'
        "\n"
        "/// The record `id` of `out_dir`: the committed one, or (with `rerun`, or when there is none) the script run\n"
        "/// again with the model given under `given` (`--model given=MODEL`).\n"
        "fn record_of(\n"
        "    id: &str, script: &str, given: &str, model: &str, scale: crossling::Scale, out_dir: &Path, rerun: bool,\n"
        ") -> Result<FigureRecord, Box<dyn std::error::Error>> {\n"
        '    let path = out_dir.join(format!("{id}.json"));\n'
        "    if !rerun && path.is_file() {\n"
        "        return Ok(FigureRecord::load(&path)?);\n"
        "    }\n"
        "    let mut opts = RunOptions::figure(scale, out_dir.to_path_buf());\n"
        '    opts.seeds = std::env::var("CROSSLING_SEEDS").map_or(Ok(1), |s| s.parse::<usize>())?.max(1);\n'
        "    opts.given_models = [(given.to_string(), registry::resolve(model)?)].into();\n"
        "    Ok(run_script(&figures::scripts_dir().join(script), id, &opts)?)\n"
        "}\n"
        "\n"
        "/// Its figure or table, the claims with their verdicts, and where it came from.\n"
        "fn show(record: &FigureRecord, out_dir: &Path) -> Result<(), Box<dyn std::error::Error>> {\n"
        "    for file in render_record(record, out_dir)? {\n"
        "        if let Some(block) = notebook_display(&file)? {\n"
        '            println!("{block}");\n'
        "        }\n"
        "    }\n"
        '    println!("{}", markdown_display(&claims_markdown(record)?));\n'
        "    let p = &record.provenance;\n"
        '    println!("{}\\n\\n{} scale, seeds {:?}, {:.0} s, revision {}", record.caption, p.scale, p.seeds_used(),\n'
        "             p.wall_time_s, p.revision);\n"
        "    Ok(())\n"
        "}"))
    for rid, script, given, what in REAL:
        cells.append(new_markdown_cell(
            f"## {rid}\n\n{what}. Script: `scripts/{script}`; made with "
            + (f"`cargo run --release -- run scripts/{script} --model real=MODEL --out figures/real/MODEL`."
               if given == "real" else
               f"`cargo run --release -- figure liu-table4 --model mbert=MODEL --out figures/real/MODEL`.")))
        cells.append(new_code_cell(
            f'let record = record_of("{rid}", "{script}", "{given}", &model, scale, &out_dir, rerun)?;\n'
            "show(&record, &out_dir)?;"))
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})
    return with_ids(nb, "real")


def index_notebook(made, missing):
    def row(f):
        name = f"[{f['id']}]({f['id']}.ipynb)" if f["id"] in made else f"{f['id']} (no script yet)"
        return f"| {name} | {f['reproduces']} | {f['title']} | {cpu_time(f)} |"

    emerging = "\n".join(row(f) for f in FIGURES if f["study"] == "Emerging")
    liu = "\n".join(row(f) for f in FIGURES if f["study"] == "Liu")
    own = "\n".join(row(f) for f in FIGURES if f["study"] == "crossling")
    head = "| notebook | in the paper | what | time at `cpu` |\n|---|---|---|---|\n"
    cells = [
        new_markdown_cell(
            "# crossling notebooks\n\n"
            "One notebook per figure or table of the two studies that crossling reproduces. Each states the paper's "
            "claim, the data and models, shows the Rhai script that is the whole experiment, runs it through the "
            "library (the same `run_script` as `cargo run --release -- figure ID`), shows the figure and, under it, "
            "the paper's claims with our verdicts, prints our numbers beside the paper's, and says how to change the "
            "experiment.\n\n"
            f"## Emerging\n\n{EMERGING}.\n\n" + head + emerging + "\n\n"
            f"## Liu\n\n{LIU}.\n\n" + head + liu + "\n\n"
            "## On a pretrained encoder\n\n[real](real.ipynb): both studies' analyses that need an encoder alone, "
            "on the registry's `e5-small` (records in `figures/real/e5-small/`).\n\n"
            "## crossling's own measurements\n\nNot figures of the studies: the evidence for the `cpu` regime "
            "(issue 25) and the synthetic pair en–enx.\n\n" + head.replace("in the paper", "issue") + own + "\n\n"
            "Times are the registry's latest measured wall times at `cpu` scale on this project's 2-core machine "
            "(README.md's figure table also gives each committed record's own)."),
        new_markdown_cell(
            "## Scales\n\n"
            "Every script reads its scale; a notebook takes it from `$CROSSLING_SCALE` (default `cpu`) when Jupyter "
            "starts, or edit `scale` in its setup cell:\n\n"
            "- `smoke`: tiny models and samples, each figure in seconds to a minute on 2 CPU cores; what the test "
            "suite and `notebooks/check.sh` run. The numbers mean nothing.\n"
            "- `cpu` (default): real data from the bundle, small models (the `mask40` presets: 4 layers x 128 wide, "
            "6,000 training steps per bilingual model, 18,000 per multilingual one); a figure takes minutes from cached "
            "models and up to a few hours with its models on 2 cores, sharing cached models, except table1 / fig3 (30 "
            "bilingual models and 90 fine-tunings: about 19 one-thread hours by the planner's estimate). The committed "
            "`figures/` are at this scale (some records at older presets, as each says in its provenance); which of the studies' claims hold there, with intervals and verdicts, is "
            "in `REPRODUCTION.md` (each notebook prints its figure's claims under the image).\n"
            "- `paper`: the studies' hyper-parameters (8 layers, 12 heads, 768 wide, 256-token streams, ...), meant "
            "for a GPU (`CROSSLING_DEVICE=cuda`); not run yet.\n\n"
            "At `cpu` a notebook writes into the project's `figures/` (as `cargo run -- figure` does); at other "
            "scales into `out/notebooks/SCALE/`; `$CROSSLING_NOTEBOOK_OUT` chooses another folder."),
        new_markdown_cell(
            "## Caching\n\n"
            "- **Models** are trained on first use and cached under `$CROSSLING_MODELS` (default "
            "`~/.cache/crossling/models`) by a hash of everything that determines them (run config, data sha256, "
            "seed, model-format revision). Figures share them: e.g. fig6 and fig7 use the same monolingual models, "
            "liu-fig8 and liu-table1..3 reuse liu-fig7's MDS grid, fig3 reuses table1's runs. An interrupted "
            "training resumes from its last checkpoint; `fresh: true` retrains.\n"
            "- **Data** comes from `$CROSSLING_DATA` (a mirror laid out like `../shared/data`), else the cache "
            "`$CROSSLING_CACHE` (default `~/.cache/crossling/data`), else a sha256-checked download "
            "(`CROSSLING_OFFLINE=1` forbids it).\n"
            "- **The kernel's build**: the first cell of a notebook (`:dep crossling = { path = \"..\" }`) compiles "
            "crossling inside the evcxr kernel. The kernel (`notebooks/evcxr-kernel.sh`) keeps that build in "
            "`.tools/evcxr-build/slot-N/`, so only the first notebook pays the full compile; later ones, and "
            "kernels restarted after an edit of `src/`, rebuild only what changed."),
        new_markdown_cell(
            "## Starting Jupyter\n\n"
            "```sh\n"
            "./setup.sh --notebooks                     # Jupyter + the evcxr kernel, once\n"
            "CROSSLING_SCALE=smoke .venv/bin/jupyter lab notebooks/index.ipynb   # or: jupyter notebook\n"
            "notebooks/check.sh                         # every notebook headless at smoke scale\n"
            ".venv/bin/python notebooks/build.py        # regenerate the notebooks from notebooks/build.py\n"
            "```\n\n"
            "The notebooks use the kernel **Rust (crossling)** (`crossling-rust`). They are generated by "
            "`notebooks/build.py` from the figure registry (`src/figures/registry.rs`, through "
            "`notebooks/figures.json`): edit the registry rather than the `.ipynb` files."),
    ]
    return with_ids(new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}),
                    "index")


# The code cells of notebooks as Rust functions in tests/, so `cargo test` compiles what the notebooks run (check.sh
# runs them but needs Jupyter and evcxr, so it is not part of `cargo test`; an API change once broke every notebook's
# run cell unnoticed). table1's notebook has every kind of figure-notebook cell, the library call included; real's
# reads and re-runs the pretrained-encoder records.
COMPILED_NOTEBOOKS = ["table1", "real"]
COMPILED_PATH = ROOT / "tests" / "notebook_cells.rs"


def compiled_cells(notebooks):
    functions = []
    for name, nb in notebooks:
        body = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            body += indented(line for line in cell.source.split("\n") if not line.startswith(":dep "))
        functions.append(
            "#[rustfmt::skip]\n"
            f"fn {name.replace('-', '_')}_notebook() -> Result<(), Box<dyn std::error::Error>> {{\n"
            + "\n".join(body)
            + "\n    Ok(())\n}\n")
    names = " and ".join(f"notebooks/{n}.ipynb" for n, _ in notebooks)
    return (
        f"//! Generated by notebooks/build.py from {names}; do not edit. Each notebook's code cells as one\n"
        "//! function, so `cargo test` compiles what the notebooks run and an API change that breaks them fails the build\n"
        "//! here (`notebooks/check.sh` executes them, but needs Jupyter and evcxr and is not part of `cargo test`).\n"
        "//! Nothing runs: the functions need a real run's data and models; compiling is the check.\n"
        "#![allow(dead_code, unused_variables, unused_imports, clippy::all)]\n\n"
        + "\n".join(functions)
    )


def merge_outputs(new, path):
    """Keeps the outputs of an existing notebook's cells whose source is unchanged: each new cell takes the outputs
    of the first not yet used old cell of the same type and source, so inserting or removing a cell elsewhere does
    not wipe the others' outputs."""
    if not path.exists():
        return new
    old = nbformat.read(path, as_version=4)
    unused = {}
    for cell in old.cells:
        unused.setdefault((cell.cell_type, cell.source), []).append(cell)
    for cell in new.cells:
        same = unused.get((cell.cell_type, cell.source))
        if same:
            previous = same.pop(0)
            if cell.cell_type == "code":
                cell.outputs = previous.outputs
                cell.execution_count = previous.execution_count
            cell.metadata = previous.metadata  # e.g. nbclient's execution times
    for key, value in old.metadata.items():
        if key != "kernelspec":  # language_info as the kernel wrote it, and anything Jupyter added
            new.metadata[key] = value
    return new


def sources(nb):
    return [(c.cell_type, c.source) for c in nb.cells]


def main(argv):
    check = "--check" in argv[1:]
    unknown = [a for a in argv[1:] if a != "--check"]
    if unknown:
        sys.exit(f"build.py: unknown option(s) {' '.join(unknown)} (known: --check)")
    made, missing, stale = [], [], []
    wanted = {}
    for f in FIGURES:
        if (SCRIPTS / f"{f['id']}.rhai").is_file():
            made.append(f["id"])
            wanted[HERE / f"{f['id']}.ipynb"] = figure_notebook(f)
        else:
            missing.append(f["id"])
    wanted[HERE / "index.ipynb"] = index_notebook(made, missing)
    wanted[HERE / "real.ipynb"] = real_notebook()
    known = {f["id"] for f in FIGURES}
    extra = sorted(p.stem for p in SCRIPTS.glob("*.rhai") if p.stem not in known)
    for path, nb in wanted.items():
        if check:
            if not path.exists() or sources(nbformat.read(path, as_version=4)) != sources(nb):
                stale.append(path.name)
            continue
        nb = merge_outputs(nb, path)
        nbformat.validate(nb)
        text = nbformat.writes(nb) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    compiled = compiled_cells([(n, wanted[HERE / f"{n}.ipynb"]) for n in COMPILED_NOTEBOOKS])
    if check:
        if not COMPILED_PATH.exists() or COMPILED_PATH.read_text(encoding="utf-8") != compiled:
            stale.append(str(COMPILED_PATH.relative_to(ROOT)))
    elif not COMPILED_PATH.exists() or COMPILED_PATH.read_text(encoding="utf-8") != compiled:
        COMPILED_PATH.write_text(compiled, encoding="utf-8")
        print(f"wrote {COMPILED_PATH.relative_to(ROOT)}")
    orphans = sorted(p.name for p in HERE.glob("*.ipynb") if p not in wanted)
    if missing:
        print(f"no script yet (no notebook): {', '.join(missing)}")
    if extra:
        print(f"scripts with no row in the registry (no notebook): {', '.join(extra)}")
    if orphans:
        print(f"notebooks that build.py no longer makes: {', '.join(orphans)}")
    if check and (stale or orphans):
        print(f"out of date: {', '.join(stale + orphans)}; run: .venv/bin/python notebooks/build.py", file=sys.stderr)
        return 1
    if check:
        print(f"{len(wanted)} notebooks up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
