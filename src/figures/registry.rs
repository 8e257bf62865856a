//! The figure registry's rows: every figure and table of the two studies, and crossling's own measurements, with
//! what each reproduces, its title, what it tests, its data, models and cost per scale. The only place this is
//! written: `crossling figure list`, the records' titles, README.md's figure table and the notebooks
//! (`notebooks/figures.json`) are generated from it.
use super::{Budget, FigureInfo};

/// The study of Wu, Conneau et al. (ACL 2020), *Emerging Cross-lingual Structure in Pretrained Language Models*.
pub const EMERGING: &str = "Emerging";
/// The study of Liu, Hsu, Chuang & Lee (2020), *A Study of Cross-Lingual Ability and Language-specific Information in
/// Multilingual BERT*.
pub const LIU: &str = "Liu";
/// This project's own measurements (not figures of the studies).
pub const CROSSLING: &str = "crossling";

const NOT_RUN: Option<&str> = None;

/// Every figure and table, in the studies' order.
pub const FIGURES: &[FigureInfo] = &[
    FigureInfo {
        id: "fig1",
        study: EMERGING,
        reproduces: "Figure 1",
        title: "Parameter-sharing ablations",
        tests: "the parameter-sharing ablations (schematic)",
        claim: "A bilingual masked LM can be pre-trained with some parameters per language and the rest shared. The \
                study separates the embeddings and/or the bottom transformer layers per language (Sep Emb, Sep L1-3, \
                Sep L1-6, and their combinations) to find which shared parameters make the model cross-lingual.",
        data: "the ablations' run configs (no data)",
        models: "none trained",
        budget: Budget { smoke: Some("0.4 s"), cpu: Some("0.4 s"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "fig2",
        study: EMERGING,
        reproduces: "Figure 2",
        title: "Monolingual alignment probe",
        tests: "the monolingual alignment probe (schematic)",
        claim: "Two models pre-trained separately, sharing nothing, are compared by fitting a linear map between \
                their representations at a layer with orthogonal Procrustes on dictionary or parallel pairs (the \
                probe of Figures 4-6).",
        data: "the `mono` run configs (no data)",
        models: "none trained",
        budget: Budget { smoke: Some("0.2 s"), cpu: Some("0.2 s"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "fig3",
        study: EMERGING,
        reproduces: "Figure 3",
        title: "Zero-shot transfer of bilingual MLMs under the ablations",
        tests: "zero-shot transfer of the ablations, pooled over pairs",
        claim: "Table 1's zero-shot transfer (XNLI, NER, parsing; fine-tuned on English, tested on French, Russian \
                and Chinese) as bars: cross-lingual transfer survives different domains and no shared vocabulary, \
                and parameter sharing is what matters most.",
        data: "the task results of table1 (cached by model weights and settings): run `table1` first",
        models: "table1's",
        budget: Budget { smoke: Some("0.1 s after table1"), cpu: Some("7–8 s after table1's runs"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "fig4",
        study: EMERGING,
        reproduces: "Figure 4",
        title: "Word-level alignment of monolingual models",
        tests: "word alignment of two monolingual models against fastText",
        claim: "Word representations of independently trained monolingual models can be aligned by an orthogonal \
                map: word translation (P@1, CSLS) after Procrustes, for non-contextual (input embedding) and \
                contextual (per layer, corpus-averaged) word vectors, beside fastText-style vectors.",
        data: "MUSE en-fr/de/ru/zh (train / test split); 10,000 training sentences of each model",
        models: "5 `mono` models; fastText-style vectors on each model's corpus",
        budget: Budget {
            smoke: Some("25.0 s from an empty cache"),
            cpu: Some("681.6 s, 3 seeds, models cached"),
            paper: NOT_RUN,
        },
    },
    FigureInfo {
        id: "fig5",
        study: EMERGING,
        reproduces: "Figure 5",
        title: "Contextual representation alignment of each layer for zero-shot transfer",
        tests: "contextual word alignment transfer per layer (MLM align vs biMLM)",
        claim: "Contextual representations of monolingual models, aligned layer by layer with a Procrustes map fit \
                on word-aligned parallel sentences, support zero-shot transfer (NER, parsing) through task layers \
                trained on English (\"MLM align\"), compared with a bilingual model (\"biMLM\").",
        data: "XNLI dev + test (maps); PAN-X; UD LinES, ParTUT, EWT, GSD",
        models: "4 `mono` + 3 `default` models",
        budget: Budget { smoke: Some("3.3 s"), cpu: Some("2,982.9 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "fig6",
        study: EMERGING,
        reproduces: "Figure 6",
        title: "Sentence retrieval after Procrustes alignment of monolingual models",
        tests: "sentence retrieval after Procrustes, per layer",
        claim: "Sentence representations of separately trained monolingual models are related by a linear map: \
                after Procrustes (fit on parallel sentences) a sentence retrieves its translation, at every layer.",
        data: "XNLI dev (map), Tatoeba (test)",
        models: "5 `mono` models",
        budget: Budget {
            smoke: Some("1.3 s with fig7's models"),
            cpu: Some("394.1 s, 3 seeds, models cached"),
            paper: NOT_RUN,
        },
    },
    FigureInfo {
        id: "fig7",
        study: EMERGING,
        reproduces: "Figure 7",
        title: "Linear CKA of parallel sentence representations per layer",
        tests: "linear CKA per layer: bilingual, monolingual, random",
        claim: "Linear CKA between representations of parallel sentences, per layer, for bilingual models, pairs \
                of monolingual models and random encoders: how similar the representations of two languages are \
                without any learnt map.",
        data: "XNLI dev; ELTeC en/fr/de, novels ru/zh",
        models: "per seed 6 `mono` (English twice: en and en′), 4 `default` and 1 `sep-emb` en–en2 model",
        budget: Budget { smoke: Some("11.0 s"), cpu: Some("2.2–2.5 h from an empty cache"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "table1",
        study: EMERGING,
        reproduces: "Table 1",
        title: "Dissecting bilingual MLMs by zero-shot cross-lingual transfer",
        tests: "the ten ablations × en–fr/ru/zh on XNLI, NER, parsing",
        claim: "Zero-shot cross-lingual transfer of bilingual MLMs under ablations of domain, anchor points (shared \
                subwords) and parameter sharing: transfer emerges even without shared vocabulary or with different \
                domains; sharing the upper layers is what matters most.",
        data: "MNLI, XNLI dev; PAN-X; UD LinES, ParTUT, EWT, GSD",
        models: "10 ablations × en–fr/ru/zh: 30 bilingual models, 90 fine-tunings",
        budget: Budget { smoke: Some("13.7 s (en–fr only)"), cpu: Some("9.45 CPU h (122 jobs)"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "table1-synthetic",
        study: CROSSLING,
        reproduces: "issue 25",
        title: "Emerging Table 1 on the synthetic pair en–enx",
        tests: "Table 1's ablations on the synthetic pair en–enx",
        claim: "Emerging Table 1's ten ablations on en–enx, where no subword is shared, plus Default on the \
                word-order-reversed control enxrev: zero-shot XNLI / NER / parsing beside the same model's English \
                score on the same sentences, testing the mechanism claims free of real-language confounds.",
        data: "MNLI, XNLI dev en; PAN-X en; UD LinES, ParTUT, EWT (rewritten into enx / enxrev)",
        models: "10 ablations on en–enx + Default on en–enxrev: 11 bilingual models, 33 fine-tunings",
        budget: Budget { smoke: Some("134.8 s"), cpu: Some("1 h 49 min, empty cache"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "emergence",
        study: CROSSLING,
        reproduces: "issue 25",
        title: "Emergence curves over the pre-training budget (en–fr)",
        tests: "en–fr structure and transfer over the pre-training budget",
        claim: "Not a figure of the studies: how the cross-lingual structure they measure (retrieval with and \
                without a map, word translation, CKA, zero-shot NER) grows with the pre-training budget for an \
                en-fr bilingual model and two monolingual models, the evidence for choosing the cpu regime.",
        data: "XNLI dev, Tatoeba fr–en, MUSE en–fr, PAN-X en/fr, MNLI, UD EWT / GSD fr; ELTeC en/fr (100k sentences \
               each)",
        models: "3 models (en–fr bilingual, en and fr monolingual) with 5 snapshots each",
        budget: Budget { smoke: Some("15.2 s"), cpu: Some("4,159.0 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "emergence-enx",
        study: CROSSLING,
        reproduces: "issue 25",
        title: "Emergence curves of the synthetic pair en–enx and its reversed control",
        tests: "the same for en–enx, which shares no subword",
        claim: "Not a figure of the studies: the emergence curves of a controlled pair, English and enx (English \
                rewritten into an unused script, read from the other half of the English novels: no shared \
                subword), with enxrev (enx with every sentence's word order reversed) as the negative control: \
                retrieval, word translation with the identity dictionary, CKA and zero-shot NER over the \
                pre-training budget.",
        data: "XNLI dev + test, MUSE en words, PAN-X en (each rewritten into enx / enxrev); ELTeC English, two halves \
               of 100k sentences",
        models: "2 models (en–enx, en–enxrev) with 5 snapshots each",
        budget: Budget { smoke: Some("22.3 s"), cpu: Some("66 min, empty cache, 2 workers"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig1",
        study: LIU,
        reproduces: "Figure 1",
        title: "Word retrieval, small data",
        tests: "word retrieval MRR, BERT vs GloVe / word2vec, small data",
        claim: "A multilingual BERT against GloVe and word2vec trained on exactly the same (small) data: \
                cross-lingual word retrieval MRR en->fr/de/ru/zh, with no mapping between languages.",
        data: "MUSE en-fr/de/ru/zh",
        models: "the `multilingual` model at the small data size; GloVe and word2vec on its sentences and tokens",
        budget: Budget { smoke: Some("6.8 s"), cpu: Some("278.0 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig2",
        study: LIU,
        reproduces: "Figure 2",
        title: "XNLI zero-shot, small data",
        tests: "XNLI on frozen representations, small data",
        claim: "Zero-shot XNLI (trained on English, tested on the other languages) of GloVe, word2vec and a \
                multilingual BERT trained on the same small data, each read frozen by the same classifier.",
        data: "MNLI; XNLI dev en/fr/de/ru/zh",
        models: "liu-fig1's: the small-data `multilingual` model, GloVe and word2vec",
        budget: Budget { smoke: Some("6.1 s"), cpu: Some("1,104.5 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig3",
        study: LIU,
        reproduces: "Figure 3",
        title: "Word retrieval, big data",
        tests: "word retrieval MRR, big data",
        claim: "The comparison of Figure 1 with five times more data (the study's 1000k sentences per language): in \
                the study BERT's advantage over the static embeddings grows with the data size.",
        data: "MUSE en-fr/de/ru/zh",
        models: "the `multilingual` model at the big data size (liu-fig7's); GloVe and word2vec on its sentences and \
                 tokens",
        budget: Budget { smoke: Some("7.7 s"), cpu: Some("467.0 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig4",
        study: LIU,
        reproduces: "Figure 4",
        title: "XNLI zero-shot, big data",
        tests: "XNLI on frozen representations, big data",
        claim: "The comparison of Figure 2 at the big data size (the study's 1000k sentences per language).",
        data: "MNLI; XNLI dev en/fr/de/ru/zh",
        models: "liu-fig3's: the big-data `multilingual` model, GloVe and word2vec",
        budget: Budget { smoke: Some("6.2 s"), cpu: Some("2,556.9 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig5",
        study: LIU,
        reproduces: "Figure 5",
        title: "Context window and word retrieval",
        tests: "a 20-token context window and word retrieval",
        claim: "BERT's context window matters for its cross-lingual ability: the model pre-trained on 20-token \
                segments retrieves word translations worse than the one pre-trained on full-length streams.",
        data: "MUSE en-fr/de/ru/zh",
        models: "the `multilingual` model at both data sizes, on full-length streams and on 20-token segments (4 \
                 models)",
        budget: Budget { smoke: Some("29.9 s"), cpu: Some("406.6 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig6",
        study: LIU,
        reproduces: "Figure 6",
        title: "Context window, data size and XNLI",
        tests: "a 20-token context window and XNLI",
        claim: "The context-window ablation of Figure 5 on zero-shot XNLI: full-length streams against 20-token \
                segments at both data sizes, each model read frozen by the same classifier, and the percentage \
                drop the short window costs.",
        data: "MNLI; XNLI dev en/fr/de/ru/zh",
        models: "the four models of liu-fig5",
        budget: Budget { smoke: Some("8.9 s"), cpu: Some("2,443.6 s, models cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-fig7",
        study: LIU,
        reproduces: "Figure 7",
        title: "Convert rate over α × layer",
        tests: "MDS convert rate over α × layer",
        claim: "Language identity sits in the mean of a language's representations: adding alpha times the mean \
                difference D = R(target) - R(source) to a token's representation (MDS) and decoding with the MLM \
                head turns the output into the target language; the convert rate rises with alpha.",
        data: "XNLI dev",
        models: "the `multilingual` model (big data size), or any HF BERT given as `mbert`",
        budget: Budget {
            smoke: Some("5.7 s"),
            cpu: Some("1 h 45 min from an empty cache (the 18,000-step model 1 h 41 min, the MDS grids 8.5 min)"),
            paper: NOT_RUN,
        },
    },
    FigureInfo {
        id: "liu-fig8",
        study: LIU,
        reproduces: "Figure 8",
        title: "BLEU-1 of unsupervised token translation",
        tests: "BLEU-1 of unsupervised token translation",
        claim: "With MDS the MLM translates token by token without supervision: BLEU-1 against alpha at each \
                direction's best layer rises from alpha = 0 and peaks at an intermediate alpha.",
        data: "the MDS grid of liu-fig7 (cached)",
        models: "liu-fig7's",
        budget: Budget { smoke: Some("< 1 s"), cpu: Some("34.8 s, grids cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-table1",
        study: LIU,
        reproduces: "Table 1",
        title: "Sample token translations with the mean-difference shift",
        tests: "sample token translations",
        claim: "Sample outputs of MDS token translation at each direction's best layer and alpha.",
        data: "the MDS grid of liu-fig7 (cached)",
        models: "liu-fig7's",
        budget: Budget { smoke: Some("< 1 s"), cpu: Some("16.6 s, grids cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-table2",
        study: LIU,
        reproduces: "Table 2",
        title: "BLEU-1 and convert rate of unsupervised token translation",
        tests: "best BLEU-1 per pair",
        claim: "The best BLEU-1 of MDS token translation per direction, with its layer and alpha, against no shift \
                (alpha = 0).",
        data: "the MDS grid of liu-fig7 (cached)",
        models: "liu-fig7's",
        budget: Budget { smoke: Some("< 1 s"), cpu: Some("11.2 s, grids cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-table3",
        study: LIU,
        reproduces: "Table 3",
        title: "Token-set sizes",
        tests: "token-set sizes",
        claim: "The sizes of the per-language token sets that define the convert rate, and their overlap.",
        data: "the MDS grid of liu-fig7 (cached)",
        models: "liu-fig7's",
        budget: Budget { smoke: Some("< 1 s"), cpu: Some("1.7 s, grids cached"), paper: NOT_RUN },
    },
    FigureInfo {
        id: "liu-table4",
        study: LIU,
        reproduces: "Table 4",
        title: "XNLI with the mean-difference shift at test time",
        tests: "zero-shot XNLI with the mean-difference shift",
        claim: "Does removing language-specific information help transfer? Zero-shot XNLI when the whole encoder is \
                fine-tuned on English, against fine-tuning only the upper half and adding the mean-difference shift \
                at the top of the frozen half at test time.",
        data: "MNLI; XNLI dev en/fr/de/ru/zh",
        models: "the `multilingual` model (or `mbert`)",
        budget: Budget {
            smoke: Some("1.9 s"),
            cpu: Some("1 h 55 min from an empty cache (the 18,000-step model 1 h 41 min)"),
            paper: NOT_RUN,
        },
    },
];
