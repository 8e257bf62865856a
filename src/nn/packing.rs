//! The real tokens of a padded batch, packed: a transformer layer's projections, feed-forward network, LayerNorms and
//! dropout act on each position alone, so on a padded batch they can run on the real tokens only, and only attention
//! needs the `[batch, seq]` layout (its queries, keys and values are scattered back into it, padded positions zero,
//! and its context is gathered again). This is NVIDIA FasterTransformer's "remove padding" (its BERT guide, *BERT with
//! remove padding*) and what Hugging Face's BetterTransformer does with nested tensors.
//!
//! - Values at real positions are those of the padded computation (each row of a matrix product, each LayerNorm,
//!   reads its own token; libtorch may block a product with fewer rows differently, so they agree to float rounding).
//! - A layer's output is zero at padded positions, where the padded computation leaves values that depend on the pad
//!   id and that nothing may read (the attention mask hides them from every real token).
//! - Dropout draws its mask over the packed tokens, so a training step with dropout draws other masks than the padded
//!   layout would (the same distribution).
//!
//! Packing pays when the batch holds padding: fine-tuning batches of pairs in random order (each padded to its
//! longest) are half padding or more; length-sorted batches ([`crate::nn::batch::length_batches`]) little, and a batch
//! with less than [`MIN_PADDING_SHARE`] of padding is left as it is (the gather and scatters would cost more than the
//! rows they save).
use tch::{Kind, Tensor};

/// The least share of padded positions for which a batch is packed.
pub const MIN_PADDING_SHARE: f64 = 0.1;

/// Where a padded batch's real tokens are (see the module docs).
#[derive(Debug)]
pub struct Packing {
    /// `[tokens]` i64: each real token's row in the flattened `[batch · seq]` layout, in order.
    index: Tensor,
    /// Rows of the padded batch.
    pub batch: i64,
    /// Positions per row of the padded batch.
    pub seq: i64,
}

impl Packing {
    /// The packing of a batch with key mask `mask`, or `None` when there is no mask, no real token, or less than
    /// [`MIN_PADDING_SHARE`] of the positions are padding (reads one number back from the device).
    ///
    /// # Shapes
    /// `mask`: `[batch, seq]` (nonzero = token)
    pub fn of(mask: Option<&Tensor>) -> Option<Packing> {
        let mask = mask?;
        let (batch, seq) = mask.size2().ok()?;
        let positions = batch * seq;
        let real = mask.reshape([-1]).ne(0); // [batch · seq] bool
        let tokens = real.sum(Kind::Int64).int64_value(&[]);
        if tokens == 0 || ((positions - tokens) as f64) < MIN_PADDING_SHARE * positions as f64 {
            return None;
        }
        let index = real.nonzero().squeeze_dim(1); // [tokens]
        Some(Packing { index, batch, seq })
    }

    /// The number of real tokens.
    pub fn tokens(&self) -> i64 {
        self.index.size()[0]
    }

    /// The real tokens' rows of a padded tensor.
    ///
    /// # Shapes
    /// `x`: `[batch, seq, d]` → `[tokens, d]`
    pub fn pack(&self, x: &Tensor) -> Tensor {
        let d = x.size()[2];
        x.reshape([self.batch * self.seq, d]).index_select(0, &self.index)
    }

    /// Packed rows back in the padded layout, zero at padded positions (differentiable in `x`).
    ///
    /// # Shapes
    /// `x`: `[tokens, d]` → `[batch, seq, d]`
    pub fn unpack(&self, x: &Tensor) -> Tensor {
        let d = x.size()[1];
        Tensor::zeros([self.batch * self.seq, d], (x.kind(), x.device()))
            .index_copy(0, &self.index, x)
            .view([self.batch, self.seq, d])
    }
}

/// [`Packing::pack`] when there is a packing; `x` itself (the padded layout) when there is none.
///
/// # Shapes
/// `x`: `[batch, seq, d]` → `[tokens, d]`, or `x`'s shape without a packing
pub fn pack_if(packing: Option<&Packing>, x: &Tensor) -> Tensor {
    packing.map_or_else(|| x.shallow_clone(), |p| p.pack(x))
}

/// [`Packing::unpack`] when there is a packing; `x` itself (already padded) when there is none.
///
/// # Shapes
/// `x`: `[tokens, d]` → `[batch, seq, d]`, or `x`'s shape without a packing
pub fn unpack_if(packing: Option<&Packing>, x: &Tensor) -> Tensor {
    packing.map_or_else(|| x.shallow_clone(), |p| p.unpack(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    fn mask(rows: &[&[i64]]) -> Tensor {
        let t = rows[0].len() as i64;
        Tensor::from_slice(&rows.concat()).view([rows.len() as i64, t])
    }

    #[test]
    fn packs_the_real_tokens_in_order_and_unpacks_with_zeros() {
        let m = mask(&[&[1, 1, 1, 0], &[1, 0, 0, 0]]);
        let p = Packing::of(Some(&m)).expect("half the positions are padding");
        assert_eq!((p.batch, p.seq, p.tokens()), (2, 4, 4));
        let x = Tensor::arange(16, (Kind::Float, Device::Cpu)).view([2, 4, 2]); // [2, 4, 2]
        let packed = p.pack(&x);
        assert_eq!(Vec::<f32>::try_from(packed.reshape([-1])).unwrap(), vec![0., 1., 2., 3., 4., 5., 8., 9.]);
        let back = p.unpack(&packed);
        let expected = &x * m.unsqueeze(-1).to_kind(Kind::Float);
        assert_eq!(back.size(), vec![2, 4, 2]);
        assert!(back.equal(&expected));
    }

    #[test]
    fn little_or_no_padding_or_no_token_is_not_packed() {
        assert!(Packing::of(None).is_none());
        assert!(Packing::of(Some(&mask(&[&[1, 1, 1, 1], &[1, 1, 1, 1]]))).is_none());
        let one_pad_in_twenty = mask(&[&[1; 10], &[1, 1, 1, 1, 1, 1, 1, 1, 1, 0]]);
        assert!(Packing::of(Some(&one_pad_in_twenty)).is_none());
        assert!(Packing::of(Some(&mask(&[&[0, 0], &[0, 0]]))).is_none());
    }

    #[test]
    fn gradients_flow_to_the_packed_rows_only() {
        let m = mask(&[&[1, 0], &[1, 1]]);
        let p = Packing::of(Some(&m)).unwrap();
        let x = Tensor::ones([2, 2, 3], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let y = p.unpack(&(p.pack(&x) * 2.0)); // [2, 2, 3]
        y.sum(Kind::Float).backward();
        let expected = m.unsqueeze(-1).to_kind(Kind::Float).expand([2, 2, 3], false) * 2.0;
        assert!(x.grad().equal(&expected));
    }
}
