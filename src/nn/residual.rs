//! Where a block's LayerNorm sits around its residual connection: BERT's post-LN (Devlin et al. 2019),
//! `LayerNorm(x + f(x))`, or pre-LN (Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture"),
//! `x + f(LayerNorm(x))` ([`crate::model::ModelConfig::pre_ln`]). `f` is the block (attention or feed-forward) with its
//! output dropout; the LayerNorm is the block's own (`….output.LayerNorm`) either way.
use tch::{nn, nn::Module, Tensor};

/// `x` through block `f` with its residual connection and LayerNorm `ln`, placed as `pre_ln` says.
///
/// # Shapes
/// `x`: `[.., hidden]` (`[batch, seq, hidden]`, or packed tokens `[tokens, hidden]`); `f`: the shape of `x` → it; → it
pub fn residual(ln: &nn::LayerNorm, pre_ln: bool, x: &Tensor, f: impl FnOnce(&Tensor) -> Tensor) -> Tensor {
    if pre_ln {
        f(&ln.forward(x)) + x
    } else {
        ln.forward(&(f(x) + x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    #[test]
    fn the_layer_norm_goes_after_the_sum_or_on_the_input() {
        let vs = nn::VarStore::new(Device::Cpu);
        let ln = nn::layer_norm(vs.root() / "ln", vec![4], Default::default());
        let x = Tensor::from_slice(&[1.0f32, 2.0, 4.0, 9.0]).view([1, 1, 4]);
        let double = |y: &Tensor| y * 2.0;
        let close = |a: &Tensor, b: &Tensor| (a - b).abs().max().double_value(&[]) < 1e-6;
        assert!(close(&residual(&ln, false, &x, double), &ln.forward(&(&x * 3.0))));
        assert!(close(&residual(&ln, true, &x, double), &(ln.forward(&x) * 2.0 + &x)));
        assert_eq!(residual(&ln, true, &x, double).kind(), Kind::Float);
    }
}
