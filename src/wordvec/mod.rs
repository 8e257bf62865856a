//! Static word embeddings trained by crossling on the same data as the MLMs: the baselines of Liu et al. (2020,
//! §3: GloVe and word2vec against BERT at two data sizes) and of Wu, Conneau et al. (2020, Figure 4a: fastText).
//!
//! - [`corpus`]: vocabulary with counts and the corpus as sentences of ids (min-count applied).
//! - [`vectors`]: words and their vectors, `.vec` text and `.safetensors` I/O.
//! - [`word2vec`]: skip-gram / CBOW with negative sampling; [`fasttext`]: skip-gram with character n-grams;
//!   [`sampling`]: what both share (noise and sub-sampling distributions, learning rate, Hogwild epochs).
//! - [`training_text`]: an MLM run's own training corpora as subword tokens or words.
//! - [`train`]: one entry point for every kind; [`vector_cache`]: the cache of vectors trained on a cached MLM run.
pub mod cooccur;
pub mod corpus;
pub mod fasttext;
pub mod glove;
pub mod sampling;
pub mod train;
pub mod training_text;
pub mod vector_cache;
pub mod vectors;
pub mod word2vec;

pub use corpus::{Corpus, Vocab};
pub use fasttext::{FastText, FastTextConfig};
pub use vectors::WordVectors;
pub use word2vec::{Word2Vec, Word2VecConfig};
