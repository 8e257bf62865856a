#!/usr/bin/env python3
"""Generate one TOML manifest per dataset from the mirror's SOURCES.tsv.

Usage: python3 data-manifests/generate.py [SOURCES.tsv] [OUT_DIR]

Defaults: $CROSSLING_DATA/SOURCES.tsv (else ../shared/data/SOURCES.tsv next to the crate) and the folder this
script lives in. The hand-written metadata of every dataset (id, description, languages, format, domain, licence,
citation, homepage, notes) lives in DATASETS below; file lists, byte counts, sha256 and upstream URLs come from
SOURCES.tsv. Every SOURCES.tsv row must land in exactly one manifest, and every dataset must get at least one file,
or the script fails without writing anything. Output is deterministic (files sorted by path), so re-running it
gives identical bytes. Python 3 standard library only.
"""
import os
import re
import sys
import urllib.parse

HEADER = ["path", "bytes", "sha256", "repo", "commit", "upstream_path", "licence"]

# Folders whose files the mirror stores gzip-compressed (upstream name + ".gz"; bytes/sha256 of the decompressed file).
GZIP_IN_MIRROR_DIRS = ("mono/en/", "mono/fr/", "mono/de/", "mono/ru/", "mono/zh/")

ISO3 = {"eng": "en", "fra": "fr", "deu": "de", "rus": "ru", "cmn": "zh"}
LANGS = ("en", "fr", "de", "ru", "zh")

ELTEC_CITATION = (
    "Schöch, Christof, Roxana Patras, Tomaž Erjavec and Diana Santos. 2021. \"Creating the European Literary Text "
    "Collection (ELTeC): Challenges and Perspectives.\" Modern Languages Open 1(25): 1-19. "
    "https://doi.org/10.3828/mlo.v0i0.364"
)
MUSE_CITATION = (
    "Conneau, Alexis, Guillaume Lample, Marc'Aurelio Ranzato, Ludovic Denoyer and Hervé Jégou. 2018. \"Word "
    "Translation Without Parallel Data.\" In International Conference on Learning Representations (ICLR 2018)."
)
XTREME_CITATION = (
    "Hu, Junjie, Sebastian Ruder, Aditya Siddhant, Graham Neubig, Orhan Firat and Melvin Johnson. 2020. \"XTREME: A "
    "Massively Multilingual Multi-task Benchmark for Evaluating Cross-lingual Generalization.\" In Proceedings of the "
    "37th International Conference on Machine Learning (ICML 2020), PMLR 119: 4411-4421."
)
UD_CITATION = (
    "Nivre, Joakim, Marie-Catherine de Marneffe, Filip Ginter, Jan Hajič, Christopher D. Manning, Sampo Pyysalo, "
    "Sebastian Schuster, Francis Tyers and Daniel Zeman. 2020. \"Universal Dependencies v2: An Evergrowing "
    "Multilingual Treebank Collection.\" In Proceedings of the 12th Language Resources and Evaluation Conference "
    "(LREC 2020), 4034-4043."
)
PUD_CITATION = (
    "Zeman, Daniel, et al. 2017. \"CoNLL 2017 Shared Task: Multilingual Parsing from Raw Text to Universal "
    "Dependencies.\" In Proceedings of the CoNLL 2017 Shared Task, 1-19. (Parallel Universal Dependencies treebanks.)"
)
GSD_CITATION = (
    "McDonald, Ryan, et al. 2013. \"Universal Dependency Annotation for Multilingual Parsing.\" In Proceedings of the "
    "51st Annual Meeting of the Association for Computational Linguistics (ACL 2013), 92-97."
)
WMT_OPUS_CITATION = (
    "Tiedemann, Jörg and Santhosh Thottingal. 2020. \"OPUS-MT - Building open translation services for the World.\" "
    "In Proceedings of the 22nd Annual Conference of the European Association for Machine Translation (EAMT 2020), "
    "479-480. (Test-set collection of the Helsinki-NLP/OPUS-MT-train repository.)"
)
WMT12_CITATION = (
    "Callison-Burch, Chris, Philipp Koehn, Christof Monz, Matt Post, Radu Soricut and Lucia Specia. 2012. \"Findings "
    "of the 2012 Workshop on Statistical Machine Translation.\" In Proceedings of the Seventh Workshop on Statistical "
    "Machine Translation (WMT 2012), 10-51."
)
WMT13_CITATION = (
    "Bojar, Ondřej, et al. 2013. \"Findings of the 2013 Workshop on Statistical Machine Translation.\" In Proceedings "
    "of the Eighth Workshop on Statistical Machine Translation (WMT 2013), 1-44."
)
WMT19_CITATION = (
    "Barrault, Loïc, et al. 2019. \"Findings of the 2019 Conference on Machine Translation (WMT19).\" In Proceedings "
    "of the Fourth Conference on Machine Translation (WMT 2019), Volume 2: Shared Task Papers, 1-61."
)


def prefix(p):
    return lambda path: path.startswith(p)


def regex(r):
    rx = re.compile(r)
    return lambda path: rx.fullmatch(path) is not None


def lang_from_mono_dir(path):
    return path.split("/")[1]


def lang_before_ext(path):
    """`…​.LANG.gz` / `…​.LANG` -> LANG (news, wmt, tico19, tatoeba)."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    code = name.rsplit(".", 1)[-1]
    code = ISO3.get(code, code)
    return code if code in LANGS else None


def lang_after_dash(path):
    """`…​/split-LANG.tsv` -> LANG (xnli, panx, udpos); udpos's train/valid/test.tsv are the English files."""
    name = path.rsplit("/", 1)[-1]
    m = re.fullmatch(r"[a-z]+-([a-z]{2})\.tsv", name)
    if m:
        return m.group(1)
    if path.startswith("ud/udpos/") and name in ("train.tsv", "valid.tsv", "test.tsv"):
        return "en"
    return None


def const(lang):
    return lambda path: lang


def ud(tid, folder, lang, name, licence, extra_citation, notes=None):
    citation = UD_CITATION if extra_citation is None else UD_CITATION + " " + extra_citation
    d = {
        "id": tid,
        "match": prefix("ud/%s/" % folder),
        "description": "Universal Dependencies treebank %s (CoNLL-U), with its LICENSE.txt and README." % name,
        "languages": [lang],
        "format": "conllu",
        "licence": licence + " (stated in the treebank's README and LICENSE.txt, listed here as doc files)",
        "citation": citation,
        "homepage": "https://github.com/UniversalDependencies/%s" % folder,
        "lang": const(lang),
    }
    if notes:
        d["notes"] = notes
    return d


DATASETS = [
    # ---- running text ----------------------------------------------------------------------------------------
    {
        "id": "eltec-en",
        "match": prefix("mono/en/"),
        "description": "ELTeC English level-1 collection: novels first published 1840-1920, TEI XML (text in "
        "<text><body> paragraphs; header, front/back matter and notes are not running text).",
        "languages": ["en"],
        "format": "eltec-tei",
        "domain": "novels",
        "citation": ELTEC_CITATION,
        "homepage": "https://github.com/COST-ELTeC/ELTeC-eng",
        "notes": "ENG18460_Reynolds.xml is absent: it has no content at the mirrored commit. Files are stored "
        "gzip-compressed in the mirror.",
        "lang": lang_from_mono_dir,
    },
    {
        "id": "eltec-fr",
        "match": prefix("mono/fr/"),
        "description": "ELTeC French level-1 collection: novels first published 1840-1920, TEI XML (text in "
        "<text><body> paragraphs; header, front/back matter and notes are not running text).",
        "languages": ["fr"],
        "format": "eltec-tei",
        "domain": "novels",
        "citation": ELTEC_CITATION,
        "homepage": "https://github.com/COST-ELTeC/ELTeC-fra",
        "notes": "Files are stored gzip-compressed in the mirror.",
        "lang": lang_from_mono_dir,
    },
    {
        "id": "eltec-de",
        "match": prefix("mono/de/"),
        "description": "ELTeC German level-1 collection: novels first published 1840-1920, TEI XML (text in "
        "<text><body> paragraphs; header, front/back matter and notes are not running text).",
        "languages": ["de"],
        "format": "eltec-tei",
        "domain": "novels",
        "citation": ELTEC_CITATION,
        "homepage": "https://github.com/COST-ELTeC/ELTeC-deu",
        "notes": "DEU024.xml and DEU048.xml are absent: they have no content at the mirrored commit. Files are "
        "stored gzip-compressed in the mirror.",
        "lang": lang_from_mono_dir,
    },
    {
        "id": "novels-ru",
        "match": prefix("mono/ru/"),
        "description": "Russian novels of the 19th and early 20th century, plain UTF-8 text, one paragraph per line.",
        "languages": ["ru"],
        "format": "novel",
        "domain": "novels",
        "citation": "JoannaBy. RussianNovels: a corpus of Russian novels (GitHub repository JoannaBy/RussianNovels, "
        "commit 0398a127fecf9b0a113ded163658f9c112c83ec5).",
        "homepage": "https://github.com/JoannaBy/RussianNovels",
        "notes": "Works still under copyright (Nabokov, Sholokhov, Bulgakov) are left out. The repository states "
        "no licence; the texts themselves are public domain. Files are stored gzip-compressed in the mirror.",
        "lang": lang_from_mono_dir,
    },
    {
        "id": "novels-zh",
        "match": regex(r"mono/zh/(三国演义|水浒传|西游记|红楼梦)-[^/]+\.txt\.gz"),
        "description": "The four classic Chinese novels (三国演义, 水浒传, 西游记, 红楼梦), one file per chapter, "
        "simplified script, classical vernacular register; chapter title on the first line.",
        "languages": ["zh"],
        "format": "novel",
        "domain": "novels",
        "citation": "Luo Guanzhong, 三国演义; Shi Nai'an, 水浒传; Wu Cheng'en, 西游记; Cao Xueqin, 红楼梦 (public-domain "
        "texts), chapter files as distributed in the GitHub repository enix223/nlp-course (commit "
        "c077f61f6aec451b877daf41a4478d5f77a36698).",
        "homepage": "https://github.com/enix223/nlp-course",
        "notes": "红楼梦 chapter files are a scraping artefact: each repeats its chapter as ever-shorter tails (10.8 M "
        "characters, only 0.87 M distinct). Split on whitespace runs (including U+00A0 and U+3000) and keep the first "
        "occurrence of each segment to recover the text. The other three novels are clean. All Chinese running text "
        "together is only about 5 M distinct characters. Files are stored gzip-compressed in the mirror.",
        "lang": const("zh"),
    },
    {
        "id": "zhwiki",
        "match": regex(r"mono/zh/zhwiki_wiki_00\.gz"),
        "description": "A slice of Chinese Wikipedia extracted with WikiExtractor: <doc ...> blocks, one article each.",
        "languages": ["zh"],
        "format": "zhwiki",
        "domain": "wiki",
        "citation": "Wikipedia contributors. Chinese Wikipedia (zh.wikipedia.org), text extracted with WikiExtractor "
        "(Attardi, Giuseppe. 2015. WikiExtractor. https://github.com/attardi/wikiextractor); file data/zhwiki/AA/wiki_00 "
        "of the GitHub repository enix223/nlp-course.",
        "homepage": "https://zh.wikipedia.org/",
        "notes": "Mixed simplified and traditional script. Stored gzip-compressed in the mirror.",
        "lang": const("zh"),
    },
    {
        "id": "zhwiki-sampled",
        "match": regex(r"mono/zh/zhwiki_sampled\.txt\.gz"),
        "description": "Sampled Chinese Wikipedia articles, one article per line (TencentPretrain / UER-py demo corpus).",
        "languages": ["zh"],
        "format": "line-docs",
        "domain": "wiki",
        "citation": "Zhao, Zhe, Hui Chen, Jinbin Zhang, Xin Zhao, Tao Liu, Wei Lu, Xi Chen, Haotang Deng, Qi Ju and "
        "Xiaoyong Du. 2019. \"UER: An Open-Source Toolkit for Pre-training Models.\" In Proceedings of EMNLP-IJCNLP "
        "2019: System Demonstrations, 241-246. (Text: Wikipedia contributors, CC BY-SA.)",
        "homepage": "https://github.com/Tencent/TencentPretrain",
        "notes": "Mixed simplified and traditional script. Stored gzip-compressed in the mirror.",
        "lang": const("zh"),
    },
    {
        "id": "clue-small",
        "match": regex(r"mono/zh/CLUECorpusSmall_sampled\.txt\.gz"),
        "description": "Sample of CLUECorpusSmall: Chinese web text, one document per line (UER-py demo corpus).",
        "languages": ["zh"],
        "format": "line-docs",
        "domain": "web",
        "citation": "Xu, Liang, Xuanwei Zhang and Qianqian Dong. 2020. \"CLUECorpus2020: A Large-scale Chinese Corpus "
        "for Pre-training Language Model.\" arXiv:2003.01355.",
        "homepage": "https://github.com/CLUEbenchmark/CLUECorpus2020",
        "notes": "Research use only. Stored gzip-compressed in the mirror.",
        "lang": const("zh"),
    },
    {
        "id": "news-mono",
        "match": prefix("mono/news/"),
        "description": "WMT newstest sets 2009-2019 as monolingual news text, one sentence per line, gzipped upstream; "
        "files named PAIR.newstestYEAR.LANG.gz, de-duplicated by content.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "news-lines",
        "domain": "news",
        "citation": WMT19_CITATION + " " + WMT_OPUS_CITATION,
        "homepage": "https://github.com/Helsinki-NLP/OPUS-MT-train/tree/master/testsets",
        "notes": "The English files overlap heavily across pairs (from 2014 on, WMT test sets share their English "
        "half); de-duplicate by line. Lines: en 213,536, de 67,776, ru 42,640, fr 34,445, zh 15,961. The .gz files "
        "are the upstream bytes (sizes and hashes are of the .gz).",
        "lang": lang_before_ext,
    },
    # ---- dictionaries ----------------------------------------------------------------------------------------
    {
        "id": "muse",
        "match": prefix("dict/muse/"),
        "description": "MUSE full ground-truth bilingual dictionaries en-fr, en-de, en-ru, en-zh and the reverse "
        "directions, one pair per line written 'target @ source'; lines ordered by source-word frequency: source "
        "words ranked [0, 5000) give MUSE's train split and [5000, 6500) its test split.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "muse-dict",
        "citation": MUSE_CITATION,
        "homepage": "https://github.com/facebookresearch/MUSE",
        "notes": "en-zh.dict and zh-en.dict: 17,861 of the 39,334 en-zh pairs are English-English, and the Chinese "
        "side is almost all traditional script; convert or filter before use with simplified-script corpora. The "
        "official en-de test file lists a few more translations than the full dictionary (3,775 vs 3,660 pairs for "
        "the same 1,500 source words), so rebuilt splits are slightly stricter. Non-commercial licence.",
        "lang": lambda path: None,
    },
    {
        "id": "muse-de-pos",
        "match": prefix("dict/muse-de-pos/"),
        "description": "MUSE en-de and de-en 5000-6500 test dictionaries split by part of speech (a, n, nw, o, pn, v); "
        "their union is the official en-de test set (1,500 source words).",
        "languages": ["en", "de"],
        "format": "muse-dict",
        "citation": MUSE_CITATION + " Kementchedjhieva, Yova, Mareike Hartmann and Anders Søgaard. 2019. \"Lost in "
        "Evaluation: Misleading Benchmarks for Bilingual Dictionary Induction.\" In Proceedings of EMNLP-IJCNLP 2019, "
        "3336-3341.",
        "homepage": "https://github.com/coastalcph/MUSE_dicos",
        "notes": "Non-commercial licence.",
        "lang": lambda path: None,
    },
    # ---- parallel text ---------------------------------------------------------------------------------------
    {
        "id": "tatoeba",
        "match": prefix("parallel/tatoeba/"),
        "description": "Tatoeba similarity-search test sets from LASER: 1,000 aligned sentences per pair "
        "(fra, deu, rus, cmn with eng; line i <-> line i), plus the set's README.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "parallel",
        "citation": "Artetxe, Mikel and Holger Schwenk. 2019. \"Massively Multilingual Sentence Embeddings for "
        "Zero-Shot Cross-Lingual Transfer and Beyond.\" Transactions of the Association for Computational "
        "Linguistics 7: 597-610.",
        "homepage": "https://github.com/facebookresearch/LASER/tree/main/data/tatoeba/v1",
        "notes": "The English side differs between pairs. cmn mixes simplified and traditional characters.",
        "lang": lang_before_ext,
    },
    {
        "id": "wmt-parallel",
        "match": prefix("parallel/wmt/"),
        "description": "WMT newstest2012 and newstest2013 for de-en, fr-en, ru-en (3,003 and 3,000 aligned lines, "
        "gzipped upstream); the English sides are identical across pairs, so the sets are four-way parallel "
        "(en, de, fr, ru).",
        "languages": ["en", "fr", "de", "ru"],
        "format": "parallel",
        "citation": WMT12_CITATION + " " + WMT13_CITATION + " " + WMT19_CITATION + " " + WMT_OPUS_CITATION,
        "homepage": "https://www.statmt.org/wmt13/translation-task.html",
        "notes": "Research use. Sizes and hashes are of the upstream .gz files.",
        "lang": lang_before_ext,
    },
    {
        "id": "tico19",
        "match": prefix("parallel/tico19/"),
        "description": "TICO-19 test set for en-fr, en-ru, en-zh: 2,100 aligned lines, four-way parallel "
        "(en, fr, ru, zh), gzipped upstream.",
        "languages": ["en", "fr", "ru", "zh"],
        "format": "parallel",
        "citation": "Anastasopoulos, Antonios, et al. 2020. \"TICO-19: the Translation Initiative for COvid-19.\" In "
        "Proceedings of the 1st Workshop on NLP for COVID-19 (Part 2) at EMNLP 2020.",
        "homepage": "https://tico-19.github.io/",
        "notes": "Sizes and hashes are of the upstream .gz files.",
        "lang": lang_before_ext,
    },
    # ---- classification / tagging ----------------------------------------------------------------------------
    {
        "id": "xnli",
        "match": prefix("xnli/"),
        "description": "XNLI in the XTREME layout: {dev,test}-LANG.tsv with premise<TAB>hypothesis<TAB>label; dev 2,490 "
        "and test 5,010 lines per language, in the same order in every language.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "xnli-tsv",
        "citation": "Conneau, Alexis, Ruty Rinott, Guillaume Lample, Adina Williams, Samuel R. Bowman, Holger Schwenk "
        "and Veselin Stoyanov. 2018. \"XNLI: Evaluating Cross-lingual Sentence Representations.\" In Proceedings of "
        "the 2018 Conference on Empirical Methods in Natural Language Processing (EMNLP 2018), 2475-2485. "
        + XTREME_CITATION,
        "homepage": "https://github.com/facebookresearch/XNLI",
        "notes": "Test labels are blank (XTREME withholds them): dev is the evaluation set and test is parallel text "
        "only. Non-commercial licence.",
        "lang": lang_after_dash,
    },
    {
        "id": "mnli",
        "match": prefix("mnli/"),
        "description": "English NLI training data drawn from MultiNLI: four CSV files (header label,text,assertion = "
        "label, premise, hypothesis) of about 20,600 rows each.",
        "languages": ["en"],
        "format": "mnli-csv",
        "citation": "Williams, Adina, Nikita Nangia and Samuel R. Bowman. 2018. \"A Broad-Coverage Challenge Corpus for "
        "Sentence Understanding through Inference.\" In Proceedings of NAACL-HLT 2018, 1112-1122.",
        "homepage": "https://cims.nyu.edu/~sbowman/multinli/",
        "notes": "The files overlap (two commits of dev1.csv and dev2.csv): together 78,358 labelled rows but 78,356 "
        "distinct premise-hypothesis pairs, 2 of them with conflicting labels; de-duplicate. Not the full MultiNLI "
        "train set.",
        "lang": const("en"),
    },
    {
        "id": "panx",
        "match": prefix("ner/panx/"),
        "description": "WikiAnn (PAN-X) NER in the XTREME layout: token<TAB>tag, blank line between sentences, BIO tags "
        "PER/ORG/LOC; 20,000 train and 10,000 dev sentences per language.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "panx-tsv",
        "citation": "Pan, Xiaoman, Boliang Zhang, Jonathan May, Joel Nothman, Kevin Knight and Heng Ji. 2017. "
        "\"Cross-lingual Name Tagging and Linking for 282 Languages.\" In Proceedings of the 55th Annual Meeting of "
        "the Association for Computational Linguistics (ACL 2017), 1946-1958. " + XTREME_CITATION,
        "homepage": "https://github.com/google-research/xtreme",
        "notes": "Test files carry no tags, so dev serves as evaluation. Chinese is tokenised by character and mixes "
        "scripts.",
        "lang": lang_after_dash,
    },
    {
        "id": "conll2003",
        "match": prefix("ner/conll2003/"),
        "description": "English CoNLL-2003 NER: 'word POS tag' columns, BIO tags; 14,041 / 3,250 / 3,453 sentences "
        "(train / dev / test).",
        "languages": ["en"],
        "format": "conll2003",
        "citation": "Tjong Kim Sang, Erik F. and Fien De Meulder. 2003. \"Introduction to the CoNLL-2003 Shared Task: "
        "Language-Independent Named Entity Recognition.\" In Proceedings of CoNLL-2003, 142-147.",
        "homepage": "https://www.clips.uantwerpen.be/conll2003/ner/",
        "notes": "Reuters RCV1 text: research use only.",
        "lang": const("en"),
    },
    {
        "id": "resume-zh",
        "match": prefix("ner/resume-zh/"),
        "description": "Chinese resume NER (ResumeNER): one character and a BMES tag per line; 3,821 / 463 / 477 "
        "sentences (train / dev / test).",
        "languages": ["zh"],
        "format": "bmes",
        "citation": "Zhang, Yue and Jie Yang. 2018. \"Chinese NER Using Lattice LSTM.\" In Proceedings of the 56th "
        "Annual Meeting of the Association for Computational Linguistics (ACL 2018), 1554-1564.",
        "homepage": "https://github.com/jiesutd/LatticeLSTM",
        "notes": "train.char.bmes has CRLF line ends (dev/test LF) and one malformed line (line 68,949 is '-NAME').",
        "lang": const("zh"),
    },
    # ---- Universal Dependencies ------------------------------------------------------------------------------
    ud("ud-en-ewt", "UD_English-EWT", "en", "English-EWT", "CC BY-SA 4.0",
       "Silveira, Natalia, et al. 2014. \"A Gold Standard Dependency Corpus for English.\" In Proceedings of LREC 2014.",
       "Only dev (2,001 sentences) and test (2,077) are in the mirror; the train file is not."),
    ud("ud-en-lines", "UD_English-LinES", "en", "English-LinES", "CC BY-NC-SA 4.0",
       "Ahrenberg, Lars. 2007. \"LinES: An English-Swedish Parallel Treebank.\" In Proceedings of NODALIDA 2007.",
       "train 3,457, dev 1,118, test 1,121 sentences. Non-commercial licence."),
    ud("ud-en-partut", "UD_English-ParTUT", "en", "English-ParTUT", "CC BY-NC-SA 4.0",
       "Sanguinetti, Manuela and Cristina Bosco. 2015. \"PartTUT: The Turin University Parallel Treebank.\" In "
       "Harmonization and Development of Resources and Tools for Italian Natural Language Processing within the "
       "PARLI Project, Springer, 51-69.",
       "train 1,781, dev 156, test 153 sentences. Non-commercial licence."),
    ud("ud-en-pud", "UD_English-PUD", "en", "English-PUD", "CC BY-SA 3.0", PUD_CITATION,
       "Test only (1,000 sentences), five-way parallel with the other PUD treebanks by sent_id."),
    ud("ud-fr-gsd", "UD_French-GSD", "fr", "French-GSD", "CC BY-SA 4.0", GSD_CITATION,
       "Only dev (1,476 sentences) and test (416) are in the mirror; the train file is not."),
    ud("ud-fr-sequoia", "UD_French-Sequoia", "fr", "French-Sequoia", "LGPL-LR",
       "Candito, Marie and Djamé Seddah. 2012. \"Le corpus Sequoia : annotation syntaxique et exploitation pour "
       "l'adaptation d'analyseur par pont lexical.\" In Proceedings of TALN 2012.",
       "train 2,231, dev 412, test 456 sentences."),
    ud("ud-fr-pud", "UD_French-PUD", "fr", "French-PUD", "CC BY-SA 3.0", PUD_CITATION,
       "Test only (1,000 sentences), five-way parallel with the other PUD treebanks by sent_id."),
    ud("ud-de-gsd", "UD_German-GSD", "de", "German-GSD", "CC BY-SA 4.0", GSD_CITATION,
       "Only dev (799 sentences) and test (977) are in the mirror; the train file is not."),
    ud("ud-de-pud", "UD_German-PUD", "de", "German-PUD", "CC BY-SA 3.0", PUD_CITATION,
       "Test only (1,000 sentences), five-way parallel with the other PUD treebanks by sent_id."),
    ud("ud-ru-gsd", "UD_Russian-GSD", "ru", "Russian-GSD", "CC BY-SA 4.0", None,
       "Only dev (579 sentences) and test (601) are in the mirror; the train file is not."),
    ud("ud-ru-taiga", "UD_Russian-Taiga", "ru", "Russian-Taiga", "CC BY-SA 4.0",
       "Shavrina, Tatiana and Olga Shapovalova. 2017. \"To the Methodology of Corpus Construction for Machine "
       "Learning: 'Taiga' Syntax Tree Corpus and Parser.\" In Proceedings of CORPORA 2017.",
       "train 3,138 sentences (from release tag r2.7, a different commit from dev/test), dev 1,260, test 1,217."),
    ud("ud-ru-pud", "UD_Russian-PUD", "ru", "Russian-PUD", "CC BY-SA 3.0", PUD_CITATION,
       "Test only (1,000 sentences), five-way parallel with the other PUD treebanks by sent_id."),
    ud("ud-zh-gsd", "UD_Chinese-GSD", "zh", "Chinese-GSD (traditional script)", "CC BY-SA 4.0", None,
       "Traditional script. Only dev (500 sentences) and test (500) are in the mirror; the train file is not."),
    ud("ud-zh-gsdsimp", "UD_Chinese-GSDSimp", "zh", "Chinese-GSDSimp (simplified script)", "CC BY-SA 4.0", None,
       "Simplified-script version of Chinese-GSD. Only dev (500 sentences) and test (500) are in the mirror."),
    ud("ud-zh-pud", "UD_Chinese-PUD", "zh", "Chinese-PUD (traditional script)", "CC BY-SA 3.0", PUD_CITATION,
       "Test only (1,000 sentences, traditional script), five-way parallel with the other PUD treebanks by sent_id."),
    {
        "id": "udpos",
        "match": prefix("ud/udpos/"),
        "description": "Universal Dependencies POS tagging in the XTREME udpos layout: word<TAB>UPOS, blank line "
        "between sentences; train en/zh, dev en/de/fr/ru/zh, test en/fr/ru/zh.",
        "languages": ["en", "fr", "de", "ru", "zh"],
        "format": "udpos-tsv",
        "citation": UD_CITATION + " " + XTREME_CITATION,
        "homepage": "https://github.com/google-research/xtreme",
        "notes": "train.tsv, valid.tsv and test.tsv are copies of the English files. Chinese script is mixed. "
        "Sentences: train en 21,786, zh 7,993; dev en 3,973, de 19,232, fr 2,904, ru 8,107, zh 999; test en 5,439, "
        "fr 5,012, ru 8,972, zh 3,454.",
        "lang": lang_after_dash,
    },
]

FORMATS = {
    "eltec-tei", "novel", "zhwiki", "line-docs", "news-lines", "muse-dict", "parallel", "xnli-tsv", "mnli-csv",
    "panx-tsv", "conll2003", "bmes", "conllu", "udpos-tsv",
}
DOMAINS = {"novels", "wiki", "web", "news"}
DOC_NAMES = re.compile(r"(LICENSE|README)(\.[A-Za-z]+)?")


def fail(msg):
    sys.stderr.write("generate.py: error: %s\n" % msg)
    sys.exit(1)


def read_sources(path):
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].split("\t") != HEADER:
        fail("%s:1: header must be %s" % (path, "\t".join(HEADER)))
    for n, line in enumerate(lines[1:], start=2):
        cols = line.split("\t")
        if len(cols) != len(HEADER):
            fail("%s:%d: expected %d tab-separated columns, found %d" % (path, n, len(HEADER), len(cols)))
        row = dict(zip(HEADER, cols))
        if not row["bytes"].isdigit():
            fail("%s:%d: bytes is not a number: %r" % (path, n, row["bytes"]))
        if not re.fullmatch(r"[0-9a-f]{64}", row["sha256"]):
            fail("%s:%d: sha256 is not 64 lowercase hex digits" % (path, n))
        row["line"] = n
        rows.append(row)
    return rows


def toml_str(s):
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u%04X" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def raw_url(row):
    return "https://raw.githubusercontent.com/%s/%s/%s" % (
        row["repo"], row["commit"], urllib.parse.quote(row["upstream_path"], safe="/"))


def render(ds, rows):
    licences = sorted({r["licence"] for r in rows})
    licence = ds.get("licence")
    if licence is None:
        if len(licences) != 1:
            fail("dataset %s: rows carry several licences %s; set 'licence' in DATASETS" % (ds["id"], licences))
        licence = licences[0]
    out = []
    out.append("# Generated by data-manifests/generate.py from SOURCES.tsv; edit the script, not this file.")
    out.append("id = %s" % toml_str(ds["id"]))
    out.append("description = %s" % toml_str(ds["description"]))
    out.append("languages = [%s]" % ", ".join(toml_str(l) for l in ds["languages"]))
    out.append("format = %s" % toml_str(ds["format"]))
    if ds.get("domain"):
        out.append("domain = %s" % toml_str(ds["domain"]))
    out.append("licence = %s" % toml_str(licence))
    out.append("citation = %s" % toml_str(ds["citation"]))
    if ds.get("homepage"):
        out.append("homepage = %s" % toml_str(ds["homepage"]))
    if ds.get("notes"):
        out.append("notes = %s" % toml_str(ds["notes"]))
    for r in sorted(rows, key=lambda r: r["path"]):
        out.append("")
        out.append("[[files]]")
        out.append("path = %s" % toml_str(r["path"]))
        out.append("bytes = %d" % int(r["bytes"]))
        out.append("sha256 = %s" % toml_str(r["sha256"]))
        out.append("url = %s" % toml_str(raw_url(r)))
        if r["path"].startswith(GZIP_IN_MIRROR_DIRS):
            if not r["path"].endswith(".gz") or r["upstream_path"].endswith(".gz"):
                fail("SOURCES.tsv:%d: %s should be upstream name + .gz" % (r["line"], r["path"]))
            out.append("gzip_in_mirror = true")
        lang = ds["lang"](r["path"])
        if lang is not None:
            if lang not in ds["languages"]:
                fail("SOURCES.tsv:%d: language %r of %s is not among %s's languages" % (
                    r["line"], lang, r["path"], ds["id"]))
            out.append("lang = %s" % toml_str(lang))
        if DOC_NAMES.fullmatch(r["path"].rsplit("/", 1)[-1]):
            out.append('role = "doc"')
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) > 1:
        sources = sys.argv[1]
    elif os.environ.get("CROSSLING_DATA"):
        sources = os.path.join(os.environ["CROSSLING_DATA"], "SOURCES.tsv")
    else:
        sources = os.path.join(here, "..", "..", "shared", "data", "SOURCES.tsv")
    out_dir = sys.argv[2] if len(sys.argv) > 2 else here

    ids = [d["id"] for d in DATASETS]
    if len(set(ids)) != len(ids):
        fail("duplicate dataset ids in DATASETS")
    for d in DATASETS:
        if d["format"] not in FORMATS:
            fail("dataset %s: unknown format %r" % (d["id"], d["format"]))
        if d.get("domain") and d["domain"] not in DOMAINS:
            fail("dataset %s: unknown domain %r" % (d["id"], d["domain"]))

    rows = read_sources(sources)
    by_ds = {d["id"]: [] for d in DATASETS}
    seen_paths = set()
    errors = []
    for r in rows:
        if r["path"] in seen_paths:
            errors.append("%s:%d: duplicate path %s" % (sources, r["line"], r["path"]))
        seen_paths.add(r["path"])
        hits = [d["id"] for d in DATASETS if d["match"](r["path"])]
        if len(hits) != 1:
            errors.append("%s:%d: %s matches %s dataset(s) %s; it must match exactly one" % (
                sources, r["line"], r["path"], len(hits), hits))
            continue
        by_ds[hits[0]].append(r)
    for d in DATASETS:
        if not by_ds[d["id"]]:
            errors.append("dataset %s matches no SOURCES.tsv row" % d["id"])
    if errors:
        fail("\n  ".join(errors))

    rendered = {d["id"]: render(d, by_ds[d["id"]]) for d in DATASETS}
    stale = sorted(f for f in os.listdir(out_dir) if f.endswith(".toml") and f[:-5] not in rendered)
    for f in stale:
        os.remove(os.path.join(out_dir, f))
    for ident, text in sorted(rendered.items()):
        with open(os.path.join(out_dir, ident + ".toml"), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    total = sum(len(v) for v in by_ds.values())
    sys.stdout.write("wrote %d manifests covering %d files (%d SOURCES.tsv rows)%s\n" % (
        len(rendered), total, len(rows), "; removed stale %s" % ", ".join(stale) if stale else ""))


if __name__ == "__main__":
    main()
