//! A one-layer, one-direction LSTM (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000) written
//! as an explicit loop over the time steps, with PyTorch's parameter layout and gate order (i, f, g, o):
//! ```text
//! [i f g o] = W_ih x_t + b_ih + W_hh h_{t−1} + b_hh          W_ih: [4h, d], W_hh: [4h, h]
//! c_t = σ(f) ⊙ c_{t−1} + σ(i) ⊙ tanh(g),    h_t = σ(o) ⊙ tanh(c_t),    h_0 = c_0 = 0
//! ```
//! Every weight and bias starts U(−1/√h, 1/√h), as `torch.nn.LSTM`. The input projection of all steps is one
//! matrix product; each step is then one `[batch, h] × [h, 4h]` product and element-wise gates, and autograd runs
//! the backward pass. libtorch's fused CPU LSTM (oneDNN) instead enters its thread pool at every step and
//! back-propagates through a reference kernel: on this project's 2-core machine, with any other process running,
//! the frozen-NLI classifier spent most of its time in the pool's barriers with it and ran several times slower than
//! with this loop; on an idle machine the fused LSTM is somewhat faster (measured: docs/performance.md,
//! *Measurements behind design choices*). A test checks this loop against `tch::nn::lstm`.
use tch::{nn, Tensor};

/// The LSTM's parameters (`weight_ih`, `weight_hh`, `bias_ih`, `bias_hh` under its path).
#[derive(Debug)]
pub struct Lstm {
    pub weight_ih: Tensor,
    pub weight_hh: Tensor,
    pub bias_ih: Tensor,
    pub bias_hh: Tensor,
}

impl Lstm {
    /// An LSTM from `input` features to `hidden` units under `p`.
    pub fn new(p: &nn::Path, input: i64, hidden: i64) -> Self {
        let bound = 1.0 / (hidden as f64).sqrt();
        let init = nn::Init::Uniform { lo: -bound, up: bound };
        Lstm {
            weight_ih: p.var("weight_ih", &[4 * hidden, input], init),
            weight_hh: p.var("weight_hh", &[4 * hidden, hidden], init),
            bias_ih: p.var("bias_ih", &[4 * hidden], init),
            bias_hh: p.var("bias_hh", &[4 * hidden], init),
        }
    }

    /// Hidden states of every step, left to right (a row's padding at its end does not reach its real steps).
    ///
    /// # Shapes
    /// `x`: `[batch, seq, input]` → `[batch, seq, hidden]`
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let (batch, seq) = (x.size()[0], x.size()[1] as usize);
        let hidden = self.weight_hh.size()[1];
        // One [batch, 4h] tensor per step; `unbind` back-propagates as one stack (a `select` per step would
        // allocate a whole [batch, seq, 4h] gradient at every step).
        let projected = (x.matmul(&self.weight_ih.tr()) + &self.bias_ih + &self.bias_hh).unbind(1);
        let w_hh = self.weight_hh.tr(); // [h, 4h]
        let mut h = Tensor::zeros([batch, hidden], (x.kind(), x.device()));
        let mut c = h.zeros_like();
        let mut out = Vec::with_capacity(seq);
        for step in &projected {
            let gates = step + h.matmul(&w_hh); // [batch, 4h]
            let g = gates.chunk(4, 1);
            c = g[1].sigmoid() * &c + g[0].sigmoid() * g[2].tanh();
            h = g[3].sigmoid() * c.tanh();
            out.push(h.shallow_clone());
        }
        Tensor::stack(&out, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::nn::RNN;
    use tch::{Device, Kind};

    #[test]
    fn the_loop_matches_libtorchs_lstm() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(3);
        let vs = nn::VarStore::new(Device::Cpu);
        let ours = Lstm::new(&(vs.root() / "ours"), 5, 7);
        let cfg = nn::RNNConfig { batch_first: true, ..Default::default() };
        let reference = nn::lstm(vs.root() / "ref", 5, 7, cfg);
        tch::no_grad(|| {
            for (name, t) in vs.variables() {
                if let Some(suffix) = name.strip_prefix("ref.") {
                    let mut t = t;
                    t.copy_(&vs.variables()[&format!("ours.{}", suffix.trim_end_matches("_l0"))]);
                }
            }
        });
        let x = Tensor::randn([3, 6, 5], (Kind::Float, Device::Cpu));
        let (want, _) = reference.seq(&x);
        let got = ours.forward(&x);
        assert_eq!(got.size(), [3, 6, 7]);
        assert!(got.allclose(&want, 1e-5, 1e-6, false), "max diff {}", (got - want).abs().max());
        // U(−1/√h, 1/√h) initialisation.
        let bound = 1.0 / 7f64.sqrt();
        assert!(ours.weight_hh.abs().max().double_value(&[]) <= bound);
    }
}
