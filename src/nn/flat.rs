//! One flat buffer for a set of parameters and one for their gradients, so that an optimiser updates all of them
//! with a handful of kernels instead of a handful per parameter. On a GPU a narrow model's step is bound by kernel
//! launches, and Adam plus clipping parameter by parameter launch about ten kernels per parameter; PyTorch's
//! multi-tensor (`foreach`) optimisers avoid that, but `tch` exposes no `foreach` ops. Flat buffers are the older
//! route to the same end (NVIDIA Apex's and DeepSpeed's flattened parameters).
//!
//! - **Parameters.** Concatenated into one tensor; each parameter's data is then replaced (`set_data`, PyTorch's
//!   `param.data = …`) by its view of the buffer, so the model, the `VarStore`, checkpoints and the optimiser all
//!   read and write the same memory.
//! - **Gradients.** Autograd allocates them at the first backward. Once every parameter has one, they are copied
//!   into a second buffer and each gradient's data is replaced by its view; from then on backward accumulates into
//!   the views in place (autograd's `AccumulateGrad` adds into a defined gradient when grad mode is off, as it is
//!   during `backward`), and `zero_grad` zeroes them in place. Every use checks, by data pointer, that each gradient
//!   still lives in the buffer, and adopts them again when one does not.
//! - **Parameters moved out.** Every use also checks that each parameter still lives in the buffer. One that was
//!   given other data since (a `set_data` elsewhere) of the same kind, device and shape is copied back into its place
//!   and pointed at it again, so its new values are the ones trained; one of another kind, device or shape makes the
//!   buffers useless, and they are given up for good ([`FlatParams::is_active`] turns false; the optimiser then works
//!   per parameter).
//!
//! Eligible: at least one parameter, all of one kind and device, each contiguous, no two overlapping in memory
//! (tied weights are one variable). Otherwise [`FlatParams::new`] returns `None` and the optimiser works per
//! parameter.
use tch::{Kind, Tensor};

/// Elements per block of [`block_norms`].
const NORM_BLOCK: i64 = 1024;

/// The L2 norms of a flat buffer's blocks of [`NORM_BLOCK`] elements (the last one shorter), each reduced in the
/// buffer's kind and returned in f64, to be combined in f64 ([`combine_norms`]), the way
/// `torch.nn.utils.clip_grad_norm_` reduces each parameter in its kind and combines the norms. One f32 reduction over
/// the whole buffer is not accurate enough at the size of a real model: over e5-small's 21,294,723 trainable gradients
/// libtorch's `norm()` gave 0.822052 where the f64 norm is 0.822793 (relative error 9.0e-4); blocks of 1,024 gave
/// 8e-9, and took half the time. A buffer of at most one block is one reduction.
///
/// # Shapes
/// `buffer`: `[n]` → `[⌈n / NORM_BLOCK⌉]` f64
pub fn block_norms(buffer: &Tensor) -> Tensor {
    let n = buffer.numel() as i64;
    let full = n / NORM_BLOCK * NORM_BLOCK;
    let tail = || buffer.narrow(0, full, n - full).norm().to_kind(Kind::Double).reshape([1]); // [1]
    if full == 0 {
        return if n == 0 { Tensor::zeros([0], (Kind::Double, buffer.device())) } else { tail() };
    }
    let blocks = buffer.narrow(0, 0, full).view([full / NORM_BLOCK, NORM_BLOCK]); // [full / B, B]
    let norms = blocks.norm_scalaropt_dim(2, [1], false).to_kind(Kind::Double); // [full / B]
    if n == full {
        norms
    } else {
        Tensor::cat(&[norms, tail()], 0)
    }
}

/// The L2 norm of the concatenation of parts whose norms are `norms`, in f64.
///
/// # Shapes
/// `norms`: `[k]` f64 → a scalar f64 tensor (0 when `k` is 0)
pub fn combine_norms(norms: &Tensor) -> Tensor {
    norms.square().sum(Kind::Double).sqrt()
}

/// The L2 norm of a flat buffer, in f64: [`block_norms`] combined.
///
/// # Shapes
/// `buffer`: `[n]` → a scalar f64 tensor (0 for an empty buffer)
pub fn l2_norm(buffer: &Tensor) -> Tensor {
    combine_norms(&block_norms(buffer))
}

/// Parameters (and, once adopted, their gradients) living in one flat buffer each (see the module docs).
#[derive(Debug)]
pub struct FlatParams {
    /// The parameters, as given (shallow clones: each is also a view of `params`).
    members: Vec<Tensor>,
    /// Each member's offset (in elements) into the buffers and its shape.
    spans: Vec<(i64, Vec<i64>)>,
    /// `[n]`: every parameter's values.
    params: Tensor,
    /// `[n]`: every parameter's gradient, once adopted.
    grads: Option<Tensor>,
    /// Given up: a parameter changed kind, device or shape.
    abandoned: bool,
}

impl FlatParams {
    /// Moves `params` into one buffer (see the module docs); `None` when they are not eligible.
    pub fn new(params: &[Tensor]) -> Option<Self> {
        let first = params.first()?;
        let (kind, device) = (first.kind(), first.device());
        let mut extents = Vec::with_capacity(params.len());
        for p in params {
            if p.kind() != kind || p.device() != device || !p.is_contiguous() || p.numel() == 0 {
                return None;
            }
            let start = p.data_ptr() as usize;
            extents.push((start, start + p.numel() * kind.elt_size_in_bytes()));
        }
        extents.sort_unstable();
        if extents.windows(2).any(|w| w[0].1 > w[1].0) {
            return None; // two parameters overlap in memory: flattening would untie them
        }
        let mut spans = Vec::with_capacity(params.len());
        let mut offset = 0i64;
        for p in params {
            spans.push((offset, p.size()));
            offset += p.numel() as i64;
        }
        let buffer =
            tch::no_grad(|| Tensor::cat(&params.iter().map(|p| p.detach().reshape([-1])).collect::<Vec<_>>(), 0));
        let members: Vec<Tensor> = params.iter().map(Tensor::shallow_clone).collect();
        for (i, p) in members.iter().enumerate() {
            let mut p = p.shallow_clone();
            p.set_data(&view_of(&buffer, &spans[i]));
        }
        Some(FlatParams { members, spans, params: buffer, grads: None, abandoned: false })
    }

    /// Whether the buffers are in use (false once given up: see the module docs).
    pub fn is_active(&self) -> bool {
        !self.abandoned
    }

    /// The parameter buffer, `[n]`.
    pub fn params(&self) -> &Tensor {
        &self.params
    }

    /// A zero buffer shaped like the parameters, `[n]`, and each parameter's view of it (optimiser state).
    pub fn zeros_like(&self) -> (Tensor, Vec<Tensor>) {
        let buffer = self.params.zeros_like();
        let views = self.spans.iter().map(|s| view_of(&buffer, s)).collect();
        (buffer, views)
    }

    /// The gradient buffer, `[n]`, when every parameter has a gradient: the gradients are adopted into it the first
    /// time (and again if autograd has replaced one since); `None` while some parameter has none.
    pub fn grads(&mut self) -> Option<Tensor> {
        if !self.params_in_place() {
            return None;
        }
        let grads: Vec<Tensor> = self.members.iter().map(Tensor::grad).collect();
        if grads.iter().any(|g| !g.defined()) {
            return None;
        }
        if let Some(buffer) = &self.grads {
            if grads.iter().zip(&self.spans).all(|(g, span)| is_view_at(g, buffer, span)) {
                return Some(buffer.shallow_clone());
            }
        }
        let buffer = tch::no_grad(|| Tensor::cat(&grads.iter().map(|g| g.reshape([-1])).collect::<Vec<_>>(), 0));
        for (i, g) in grads.iter().enumerate() {
            let mut g = g.shallow_clone();
            g.set_data(&view_of(&buffer, &self.spans[i]));
        }
        self.grads = Some(buffer.shallow_clone());
        Some(buffer)
    }

    /// Whether every parameter lives in the parameter buffer, after pointing those moved out back at it (see the
    /// module docs); false once the buffers are given up.
    fn params_in_place(&mut self) -> bool {
        if self.abandoned {
            return false;
        }
        for (p, span) in self.members.iter().zip(&self.spans) {
            if is_view_at(p, &self.params, span) {
                continue;
            }
            if p.kind() != self.params.kind() || p.device() != self.params.device() || p.size() != span.1 {
                self.abandoned = true;
                return false;
            }
            let view = view_of(&self.params, span);
            tch::no_grad(|| view.shallow_clone().copy_(p));
            p.shallow_clone().set_data(&view);
        }
        true
    }
}

/// Whether `t` is the view of `buffer` at `span` (offset, shape): same first element, shape, contiguous.
fn is_view_at(t: &Tensor, buffer: &Tensor, span: &(i64, Vec<i64>)) -> bool {
    let first = buffer.data_ptr() as usize + span.0 as usize * buffer.kind().elt_size_in_bytes();
    t.data_ptr() as usize == first && t.size() == span.1 && t.is_contiguous()
}

/// The view of `buffer` that holds the member at `span` (offset, shape).
fn view_of(buffer: &Tensor, span: &(i64, Vec<i64>)) -> Tensor {
    let numel: i64 = span.1.iter().product();
    buffer.narrow(0, span.0, numel).view(span.1.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{nn, Device, Kind};

    #[test]
    fn l2_norm_of_a_long_f32_buffer_matches_f64() {
        tch::manual_seed(7);
        // 3,000,001 elements: blocks and a tail (one f32 `norm()` of this size is off by about 6e-5).
        let g = Tensor::randn([3_000_001], (Kind::Float, Device::Cpu)) * 0.01;
        let exact = g.to_kind(Kind::Double).norm().double_value(&[]);
        let blocked = l2_norm(&g).double_value(&[]);
        assert!(((blocked - exact) / exact).abs() < 1e-7, "blocked {blocked} against f64 {exact}");
        assert_eq!(l2_norm(&Tensor::zeros([0], (Kind::Float, Device::Cpu))).double_value(&[]), 0.0);
        let short = Tensor::from_slice(&[3.0f32, 4.0]);
        assert_eq!(l2_norm(&short).double_value(&[]), 5.0);
    }

    fn store() -> (nn::VarStore, Vec<Tensor>) {
        let vs = nn::VarStore::new(Device::Cpu);
        let a = vs.root().var("a", &[2, 3], nn::Init::Const(1.0));
        let b = vs.root().var("b", &[4], nn::Init::Const(2.0));
        (vs, vec![a, b])
    }

    #[test]
    fn parameters_become_views_of_one_buffer_and_keep_their_values() {
        let (vs, params) = store();
        let flat = FlatParams::new(&params).unwrap();
        assert_eq!(flat.params().size(), [10]);
        assert_eq!(Vec::<f32>::try_from(flat.params()).unwrap(), [1., 1., 1., 1., 1., 1., 2., 2., 2., 2.]);
        // A write through the buffer is seen by the parameters, the VarStore's handles included.
        let _ = tch::no_grad(|| flat.params().shallow_clone().fill_(5.0));
        assert_eq!(params[0].double_value(&[1, 2]), 5.0);
        assert_eq!(vs.variables()["b"].double_value(&[3]), 5.0);
        assert!(params[0].requires_grad() && params[0].size() == [2, 3]);
    }

    #[test]
    fn gradients_are_adopted_once_and_backward_accumulates_into_the_buffer() {
        let (_vs, params) = store();
        let mut flat = FlatParams::new(&params).unwrap();
        assert!(flat.grads().is_none(), "no gradient before the first backward");
        let loss = |k: f64| (&params[0] * k).sum(Kind::Float) + (&params[1] * (2.0 * k)).sum(Kind::Float);
        loss(1.0).backward();
        let g = flat.grads().unwrap();
        assert_eq!(Vec::<f32>::try_from(&g).unwrap(), [1., 1., 1., 1., 1., 1., 2., 2., 2., 2.]);
        // zero_grad and the next backward write into the same buffer: no copy is needed any more.
        for p in &params {
            p.shallow_clone().zero_grad();
        }
        loss(3.0).backward();
        assert_eq!(Vec::<f32>::try_from(&g).unwrap(), [3., 3., 3., 3., 3., 3., 6., 6., 6., 6.]);
        let again = flat.grads().unwrap();
        assert_eq!(again.data_ptr(), g.data_ptr(), "still adopted");
        // Scaling the buffer scales each parameter's gradient (clipping).
        let _ = tch::no_grad(|| again.shallow_clone().g_mul_scalar_(0.5));
        assert_eq!(params[1].grad().double_value(&[0]), 3.0);
    }

    #[test]
    fn a_parameter_given_other_data_is_put_back_or_the_buffers_are_given_up() {
        let (_vs, params) = store();
        let mut flat = FlatParams::new(&params).unwrap();
        // New data of the same kind and shape (a load that replaced the tensor): copied into the buffer.
        params[1].shallow_clone().set_data(&Tensor::full([4], 7.0, (Kind::Float, Device::Cpu)));
        params[1].sum(Kind::Float).backward();
        params[0].sum(Kind::Float).backward();
        assert!(flat.grads().is_some());
        assert_eq!(Vec::<f32>::try_from(flat.params()).unwrap()[6..], [7., 7., 7., 7.]);
        let _ = tch::no_grad(|| flat.params().shallow_clone().fill_(1.0));
        assert_eq!(params[1].double_value(&[0]), 1.0, "the parameter reads the buffer again");
        // Another kind: the buffers are given up.
        params[0].shallow_clone().set_data(&Tensor::zeros([2, 3], (Kind::Double, Device::Cpu)));
        assert!(flat.grads().is_none() && !flat.is_active());
    }

    #[test]
    fn ineligible_sets_are_refused() {
        let (_vs, params) = store();
        assert!(FlatParams::new(&[]).is_none());
        assert!(FlatParams::new(&[params[0].shallow_clone(), params[0].shallow_clone()]).is_none(), "shared memory");
        let other_kind = Tensor::zeros([3], (Kind::Double, Device::Cpu)).set_requires_grad(true);
        assert!(FlatParams::new(&[params[1].shallow_clone(), other_kind]).is_none());
        let strided = Tensor::zeros([4, 4], (Kind::Float, Device::Cpu)).tr().set_requires_grad(true);
        assert!(FlatParams::new(&[strided]).is_none(), "not contiguous");
        let whole = Tensor::zeros([6], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let part = whole.narrow(0, 2, 2);
        assert!(FlatParams::new(&[whole.shallow_clone(), part]).is_none(), "overlapping");
    }
}
