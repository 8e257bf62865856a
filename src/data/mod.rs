//! The data layer: manifests describe every dataset ([`manifest`]); [`resolve`] finds each file in the
//! `$CROSSLING_DATA` mirror, the user cache, or downloads it ([`download`]: streamed, then checked against its
//! sha256); [`formats`] reads each format; [`FilesRead`] is the provenance every reader returns.

pub mod documents;
pub mod download;
pub mod formats;
pub mod manifest;
pub mod resolve;
pub mod text_file;

/// Files read, as (mirror path, sha256): the provenance a reader returns with its data.
pub type FilesRead = Vec<(String, String)>;
