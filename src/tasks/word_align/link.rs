//! The alignment link that the aligner ([`super`]), its symmetrisation ([`super::symmetrize`]) and its error rate
//! ([`super::aer`]) share.

/// An alignment link: (source index, target index), 0-based.
pub type Link = (usize, usize);
