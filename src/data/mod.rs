//! The data layer: manifests describe every dataset ([`manifest`]); [`resolve`] finds each file in the
//! `$CROSSLING_DATA` mirror, the user cache, or downloads it with a sha256 check; [`formats`] reads each format;
//! [`stats`] counts documents / sentences / tokens / characters per language.

pub mod documents;
pub mod evalsets;
pub mod formats;
pub mod manifest;
pub mod resolve;
pub mod stats;
pub mod text_file;
