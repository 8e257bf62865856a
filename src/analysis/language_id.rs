//! How separable languages are by layer: nearest-mean-of-language identification (after Liu et al. 2020, §4.1, "the
//! representations of tokens from different languages are still able to be distinguished easily").
//!
//! For languages `L_1 … L_n`, the mean of language at layer `l` is estimated on a fitting set of each language's
//! sentence vectors, `R_l(L_k) = mean_x h_l(x)` ([`super::language`] takes the mean over tokens; here over sentence
//! vectors, each the mean of its tokens). A held-out sentence `x` of language `L` is identified as
//! `argmin_k ‖h_l(x) − R_l(L_k)‖₂`; the score of layer `l` is the share of held-out sentences identified correctly
//! (chance `1 / n`). A layer where it is near 1 keeps each language in its own region around its mean.
use tch::{Kind, Tensor};

use crate::error::{Error, Result};

/// Per layer, per held-out sentence (languages in order, each language's sentences in order), 1.0 when the nearest
/// mean of language is its own, else 0.0.
///
/// # Shapes
/// `fit[k]`, `test[k]`: `[layers, n_k, d]` per language `k` (same `layers` and `d` throughout) → `layers` ×
/// `Σ_k m_k` hits
pub fn nearest_mean_hits(fit: &[Tensor], test: &[Tensor]) -> Result<Vec<Vec<f64>>> {
    if fit.len() != test.len() || fit.len() < 2 {
        return Err(Error::Invalid(format!(
            "language identification needs the same languages (at least 2) for fitting and testing, got {} and {}",
            fit.len(),
            test.len()
        )));
    }
    let shape = |t: &Tensor| -> Result<(i64, i64)> {
        match t.size()[..] {
            [l, n, d] if n > 0 => Ok((l, d)),
            ref s => Err(Error::Invalid(format!("expected [layers, n > 0, d] sentence vectors, got {s:?}"))),
        }
    };
    let (layers, d) = shape(&fit[0])?;
    for t in fit.iter().chain(test) {
        if shape(t)? != (layers, d) {
            return Err(Error::Invalid(format!("every stack must be [{layers}, n, {d}], got {:?}", t.size())));
        }
    }
    // [layers, n_lang, d]
    let means = Tensor::stack(
        &fit.iter().map(|t| t.to_kind(Kind::Double).mean_dim(1, false, Kind::Double)).collect::<Vec<_>>(),
        1,
    );
    let mut hits: Vec<Vec<f64>> = vec![Vec::new(); layers as usize];
    for (k, t) in test.iter().enumerate() {
        // [layers, m, n_lang]
        let dist = Tensor::cdist(&t.to_kind(Kind::Double), &means, 2.0, None::<i64>);
        let nearest = dist.argmin(2, false);
        for (l, h) in hits.iter_mut().enumerate() {
            let row = Vec::<i64>::try_from(nearest.get(l as i64)).map_err(|e| Error::Invalid(e.to_string()))?;
            h.extend(row.into_iter().map(|j| if j == k as i64 { 1.0 } else { 0.0 }));
        }
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_languages_are_identified_and_mixed_ones_are_not() {
        tch::manual_seed(0);
        let noise = |n: i64| Tensor::randn([2, n, 4], (Kind::Float, tch::Device::Cpu)) * 0.1;
        // Layer 0: the two languages sit around +1 and −1 on the first axis; layer 1: both around 0.
        let centre = |s: f32| Tensor::from_slice(&[s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).view([2, 1, 4]);
        let a_fit = noise(50) + centre(1.0);
        let b_fit = noise(50) + centre(-1.0);
        let a_test = noise(20) + centre(1.0);
        let b_test = noise(20) + centre(-1.0);
        let hits = nearest_mean_hits(&[a_fit, b_fit], &[a_test, b_test]).unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].len(), 40);
        assert!(hits[0].iter().all(|&h| h == 1.0));
        let mixed: f64 = hits[1].iter().sum::<f64>() / 40.0;
        assert!(mixed < 0.9, "{mixed}");
        let e = nearest_mean_hits(&[noise(3)], &[noise(3)]).unwrap_err().to_string();
        assert!(e.contains("at least 2"), "{e}");
    }
}
