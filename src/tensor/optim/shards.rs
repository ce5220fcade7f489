//! Data-parallel training steps: a batch is cut into a fixed number of shards, each shard's
//! forward and backward pass runs on its own tape on its own thread (its kernels on that
//! thread alone), and the shards' parameter gradients are added up in shard order.
//!
//! Each shard's backward pass sets its gradients rather than adding to zeroed ones
//! ([`Tape::backward_set`]): a layer's weight product writes its gradient directly, so no
//! pass over the parameters zeroes them first.
//!
//! Why not only parallel kernels: a training step of a small network is dozens of
//! products of a few hundred rows, each with its own packing, its own barrier and its own
//! serial tail (bias, activation, loss); splitting each one over the cores leaves a core
//! idle in every serial part and pays a thread start per product. Splitting the batch
//! instead keeps every core busy for the whole step, with one start and one join.
//!
//! A worker that runs out of shards does not wait at the step's end: it takes blocks of
//! the products and sparse layers the other shards are still running ([`crate::tensor::runtime::help`]),
//! so a core the host slows down holds up the step only for the rest of a shard
//! (activations, loss, the head's small products).
//!
//! The result does not depend on the thread count: the shards and the order in which their
//! gradients are summed are fixed, and with one thread the shards simply run one after the
//! other; a helped kernel computes each block exactly as its owner would. (It does depend
//! on the number of shards, as any change of summation order does.)

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::precision::{precision, with_precision};
use crate::tensor::runtime::help::{pause, with_board, Board};
use crate::tensor::matrix::Matrix;
use crate::tensor::autograd::params::Params;
use crate::tensor::autograd::tape::{Tape, Var};
use crate::tensor::optim::{sum_grads, Optimizer};
use crate::tensor::runtime::threads::{configured_threads, serial};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Tapes and gradient buffers of `n` shards, kept from step to step.
pub struct Shards {
    tapes: Vec<Tape>,
    /// Gradients of shards 1.. (shard 0 writes the parameters' own).
    grads: Vec<Vec<Matrix>>,
    /// Time the workers spent waiting at the end of the steps (out of shards, with no
    /// kernel block to help with), summed over workers, since the last [`Shards::take_idle`].
    idle: std::time::Duration,
}

impl Shards {
    /// `n` shards (at least one).
    pub fn new(n: usize) -> Shards {
        let n = n.max(1);
        Shards { tapes: (0..n).map(|_| Tape::new()).collect(), grads: (1..n).map(|_| Vec::new()).collect(), idle: std::time::Duration::ZERO }
    }

    pub fn len(&self) -> usize {
        self.tapes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tapes.is_empty()
    }

    /// The workers' waiting time at the steps' ends (the join: out of shards and of kernel
    /// blocks to help with), summed over workers since the last call, and reset.
    pub fn take_idle(&mut self) -> std::time::Duration {
        std::mem::take(&mut self.idle)
    }

    /// Shard `s`'s tape as the last step left it (its values: logits, activations).
    pub fn tape(&self, s: usize) -> &Tape {
        &self.tapes[s]
    }

    /// One data-parallel forward and backward pass. For each shard `s`, `forward(s, tape,
    /// params)` records the shard's forward pass on a reset tape and returns its loss (a
    /// mean over the shard's rows) with anything the caller wants back; the loss is
    /// backpropagated with weight `weights[s]` (the shard's share of the batch, so that the
    /// sum is the whole batch's mean), and `params`' gradients are **set** to the sum of
    /// the shards' gradients, in shard order (what they held before is dropped; frozen
    /// parameters' are left alone). Returns each shard's loss and value.
    pub fn forward_backward<T: Send>(
        &mut self,
        params: &mut Params,
        weights: &[f32],
        forward: impl Fn(usize, &mut Tape, &Params) -> Result<(Var, T)> + Sync,
    ) -> Result<Vec<(f32, T)>> {
        self.forward_backward_with(configured_threads(), params, weights, forward)
    }

    /// [`Shards::forward_backward`] on at most `threads` threads.
    pub fn forward_backward_with<T: Send>(
        &mut self,
        threads: usize,
        params: &mut Params,
        weights: &[f32],
        forward: impl Fn(usize, &mut Tape, &Params) -> Result<(Var, T)> + Sync,
    ) -> Result<Vec<(f32, T)>> {
        self.check(weights)?;
        let out = self.run(threads, params, weights, forward);
        // The sum, in shard order, before any error is returned (the gradients stay whole).
        sum_grads(params, &self.grads);
        out.into_iter().collect()
    }

    fn check(&self, weights: &[f32]) -> Result<()> {
        if weights.len() != self.len() {
            return Err(TensorError::shape("shards", format!("{} weights for {} shards", weights.len(), self.len())));
        }
        Ok(())
    }

    /// The shards' passes (`weights` checked): each shard's result, with `params`'
    /// gradients set to shard 0's and the others' left in `self.grads` (not yet summed).
    fn run<T: Send>(
        &mut self,
        threads: usize,
        params: &mut Params,
        weights: &[f32],
        forward: impl Fn(usize, &mut Tape, &Params) -> Result<(Var, T)> + Sync,
    ) -> Vec<Result<(f32, T)>> {
        // Each shard's products in the precision of the thread that called the step (a
        // trainer's stage sets it, `tensor::kernels::precision`), on whichever thread it runs.
        let (n, precision) = (self.len(), precision());
        for g in &mut self.grads {
            if g.len() != params.len() {
                *g = params.ids().map(|id| Matrix::zeros(params.value(id).rows(), params.value(id).cols())).collect();
            }
        }
        let mut own = std::mem::take(&mut params.grads);
        let vals: &Params = params;
        let workers = threads.clamp(1, n);
        // With more than one worker, a worker out of shards helps with the others' kernels.
        let board = Board::new();
        let left = AtomicUsize::new(n);
        let idle_ns = std::sync::atomic::AtomicU64::new(0);
        let run = |s: usize, tape: &mut Tape, grads: &mut [Matrix]| -> Result<(f32, T)> {
            let mut shard = || {
                serial(|| {
                    with_precision(precision, || {
                        tape.reset();
                        let (loss, out) = forward(s, tape, vals)?;
                        tape.backward_set(loss, vals, grads, weights[s])?;
                        Ok((tape.scalar(loss), out))
                    })
                })
            };
            // Counted as done however it ends (a panic too), so no helper waits forever.
            struct Done<'a>(&'a AtomicUsize);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.fetch_sub(1, Ordering::AcqRel);
                }
            }
            let _done = Done(&left);
            if workers > 1 { with_board(&board, shard) } else { shard() }
        };
        // Shard 0 writes the parameters' gradients; the others their own.
        let mut jobs: Vec<(usize, &mut Tape, &mut [Matrix])> = Vec::with_capacity(n);
        let (t0, rest) = self.tapes.split_first_mut().expect("at least one shard");
        jobs.push((0, t0, &mut own[..]));
        for (i, (t, g)) in rest.iter_mut().zip(self.grads.iter_mut()).enumerate() {
            jobs.push((i + 1, t, &mut g[..]));
        }
        let mut results: Vec<Option<Result<(f32, T)>>> = (0..n).map(|_| None).collect();
        // Workers take the next shard as they come free (the caller is one of them; with one
        // worker it runs them all, in order): on a shared machine a core that is preempted
        // then does fewer shards instead of holding up the step. Which worker runs a shard
        // changes no bits.
        let queue = std::sync::Mutex::new(jobs.into_iter());
        let work = || {
            let mut out = Vec::new();
            loop {
                let job = queue.lock().map(|mut q| q.next()).unwrap_or(None);
                let Some((s, t, g)) = job else { break };
                out.push((s, run(s, t, g)));
            }
            // Out of shards: help with the others' kernels, and count the time with none
            // to help with (the step's join).
            let (mut rounds, mut since, mut waited): (_, Option<std::time::Instant>, _) = (0, None, std::time::Duration::ZERO);
            while left.load(Ordering::Acquire) > 0 {
                if board.help() {
                    rounds = 0;
                    if let Some(t) = since.take() {
                        waited += t.elapsed();
                    }
                } else {
                    since.get_or_insert_with(std::time::Instant::now);
                    pause(&mut rounds);
                }
            }
            if let Some(t) = since {
                waited += t.elapsed();
            }
            idle_ns.fetch_add(waited.as_nanos() as u64, Ordering::Relaxed);
            out
        };
        let done = std::sync::Mutex::new(Vec::with_capacity(n));
        crate::tensor::runtime::crew::run(workers, &|_| {
            let out = work();
            done.lock().unwrap_or_else(|e| e.into_inner()).extend(out);
        });
        for (s, r) in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
            results[s] = Some(r);
        }
        params.grads = own;
        self.idle += std::time::Duration::from_nanos(idle_ns.into_inner());
        results.into_iter().map(|r| r.expect("every shard ran")).collect()
    }

    /// One data-parallel optimizer step: [`Shards::forward_backward`], then `opt` updates
    /// the parameters from the shards' summed gradients ([`Optimizer::step_sharded`]: an
    /// optimizer may sum them as it reads them, in the same order and so to the same bits,
    /// instead of in a pass of their own). When a shard fails, the gradients are summed,
    /// nothing is updated and the error is returned.
    pub fn train_step<T: Send>(
        &mut self,
        params: &mut Params,
        weights: &[f32],
        opt: &mut dyn Optimizer,
        forward: impl Fn(usize, &mut Tape, &Params) -> Result<(Var, T)> + Sync,
    ) -> Result<Vec<(f32, T)>> {
        self.check(weights)?;
        let out = self.run(configured_threads(), params, weights, forward);
        match out.into_iter().collect::<Result<Vec<_>>>() {
            Ok(v) => {
                opt.step_sharded(params, &self.grads);
                Ok(v)
            }
            Err(e) => {
                sum_grads(params, &self.grads);
                Err(e)
            }
        }
    }
}

/// Equal shares of `rows` over `n` shards, as row ranges (the first ones one row longer
/// when it does not divide), and each range's weight `len / rows`.
pub fn split_rows(rows: usize, n: usize) -> Vec<(std::ops::Range<usize>, f32)> {
    let n = n.max(1);
    let (base, extra) = (rows / n, rows % n);
    let mut start = 0;
    (0..n)
        .map(|s| {
            let len = base + usize::from(s < extra);
            let r = start..start + len;
            start += len;
            (r, len as f32 / rows.max(1) as f32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::kernels::precision::Precision;
    use crate::tensor::{Init, Rng};

    /// A two-layer ReLU regression of `y` on `x` (`w1`, `b1`, `w2`, `b2`).
    struct Regression {
        params: Params,
        ids: [crate::tensor::ParamId; 4],
        x: Matrix,
        y: Matrix,
    }

    impl Regression {
        fn new(seed: u64, rows: usize, inputs: usize, hidden: usize, outputs: usize) -> Regression {
            let mut rng = Rng::new(seed);
            let mut params = Params::new();
            let mut add = |name: &str, r, c| params.add(name, Init::HeNormal.matrix(r, c, &mut rng)).unwrap();
            let ids = [add("w1", inputs, hidden), add("b1", 1, hidden), add("w2", hidden, outputs), add("b2", 1, outputs)];
            let (x, y) = (Init::HeNormal.matrix(rows, inputs, &mut rng), Init::HeNormal.matrix(rows, outputs, &mut rng));
            Regression { params, ids, x, y }
        }

        /// The mean squared error of rows `r` under `p`, recorded on `tape`.
        fn loss(&self, tape: &mut Tape, p: &Params, r: std::ops::Range<usize>) -> Result<Var> {
            let rows = |m: &Matrix| Matrix::from_vec(r.len(), m.cols(), m.data()[r.start * m.cols()..r.end * m.cols()].to_vec());
            let [w1, b1, w2, b2] = self.ids;
            let h = tape.input(&rows(&self.x)?);
            let h = tape.affine(p, h, w1, b1)?;
            let h = tape.relu(h)?;
            let z = tape.affine(p, h, w2, b2)?;
            let t = tape.input(&rows(&self.y)?);
            tape.mse(z, t)
        }
    }

    /// The join's clock: nothing waits with one worker, and a read resets it.
    #[test]
    fn the_join_is_zero_on_one_thread_and_taken_once() {
        let net = Regression::new(4, 12, 5, 4, 2);
        let mut params = net.params.clone();
        let parts = split_rows(12, 2);
        let weights: Vec<f32> = parts.iter().map(|p| p.1).collect();
        let mut shards = Shards::new(2);
        let step = |shards: &mut Shards, params: &mut Params, threads| {
            shards.forward_backward_with(threads, params, &weights, |s, tape, p| Ok((net.loss(tape, p, parts[s].0.clone())?, ()))).unwrap();
        };
        step(&mut shards, &mut params, 1);
        assert_eq!(shards.take_idle(), std::time::Duration::ZERO);
        // Two workers with one shard each: whoever finishes first waits (or helps) until the
        // other is done; whatever it measured is read once.
        shards.idle = std::time::Duration::from_millis(7);
        step(&mut shards, &mut params, 2);
        assert!(shards.take_idle() >= std::time::Duration::from_millis(7));
        assert_eq!(shards.take_idle(), std::time::Duration::ZERO);
    }

    /// The whole batch on one tape or cut into shards: the gradients agree (to rounding),
    /// and the sharded ones are the same bits for 1 and 2 threads.
    #[test]
    fn sharded_gradients_equal_the_whole_batch_and_ignore_the_thread_count() {
        let net = Regression::new(3, 13, 7, 5, 3);
        let mut params = net.params.clone();
        let mut tape = Tape::new();
        let l = net.loss(&mut tape, &params, 0..13).unwrap();
        tape.backward(l, &mut params).unwrap();
        let whole: Vec<Matrix> = params.ids().map(|id| params.grad(id).clone()).collect();
        let mut by_threads = Vec::new();
        for threads in [1, 2] {
            params.zero_grads();
            let parts = split_rows(13, 3);
            let weights: Vec<f32> = parts.iter().map(|p| p.1).collect();
            let mut shards = Shards::new(3);
            let out = shards
                .forward_backward_with(threads, &mut params, &weights, |s, tape, p| Ok((net.loss(tape, p, parts[s].0.clone())?, s)))
                .unwrap();
            assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), vec![0, 1, 2]);
            let got: Vec<Matrix> = params.ids().map(|id| params.grad(id).clone()).collect();
            for (g, w) in got.iter().zip(&whole) {
                for (a, b) in g.data().iter().zip(w.data()) {
                    assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "sharded {a} vs whole {b}");
                }
            }
            by_threads.push(got);
        }
        for (a, b) in by_threads[0].iter().zip(&by_threads[1]) {
            assert_eq!(a.data(), b.data(), "1 and 2 threads give other bits");
        }
    }

    /// A step through `train_step` (the optimizer summing the shards' gradients as it reads
    /// them) gives the bits of `forward_backward` then `step`, for SGD with and without
    /// momentum and for Adam, with a frozen parameter left as it was.
    #[test]
    fn train_step_equals_summing_then_stepping() {
        use crate::tensor::{Adam, Optimizer, Sgd};
        let mut net = Regression::new(8, 11, 6, 9, 2);
        let [w1, b1, ..] = net.ids;
        net.params.set_frozen(b1, true);
        let p0 = &net.params;
        let parts = split_rows(11, 2);
        let weights: Vec<f32> = parts.iter().map(|p| p.1).collect();
        let forward = |s: usize, tape: &mut Tape, p: &Params| -> Result<(Var, ())> { Ok((net.loss(tape, p, parts[s].0.clone())?, ())) };
        let opts = || -> Vec<Box<dyn Optimizer>> { vec![Box::new(Sgd::new(0.1)), Box::new(Sgd::new(0.1).with_momentum(0.9)), Box::new(Adam::new(0.01))] };
        for (mut oa, mut ob) in opts().into_iter().zip(opts()) {
            let (mut pa, mut pb) = (p0.clone(), p0.clone());
            let (mut sa, mut sb) = (Shards::new(2), Shards::new(2));
            for _ in 0..3 {
                sa.train_step(&mut pa, &weights, oa.as_mut(), forward).unwrap();
                sb.forward_backward(&mut pb, &weights, forward).unwrap();
                ob.step(&mut pb);
            }
            for id in pa.ids() {
                assert_eq!(pa.value(id).data(), pb.value(id).data(), "{}", pa.name(id));
            }
            assert_ne!(pa.value(w1).data(), p0.value(w1).data(), "nothing was trained");
            assert_eq!(pa.value(b1).data(), p0.value(b1).data(), "a frozen parameter moved");
        }
    }

    /// Called with bf16 products, every shard's forward and backward products change (by
    /// about bf16's precision, not more), and the bits still do not depend on the thread count.
    #[test]
    fn the_callers_precision_reaches_every_shard_and_ignores_the_thread_count() {
        let net = Regression::new(11, 40, 37, 29, 3);
        let parts = split_rows(40, 2);
        let weights: Vec<f32> = parts.iter().map(|p| p.1).collect();
        let grads = |precision: Precision, threads: usize| -> Vec<Vec<f32>> {
            let mut params = net.params.clone();
            let mut shards = Shards::new(2);
            with_precision(precision, || {
                shards.forward_backward_with(threads, &mut params, &weights, |s, tape, p| Ok((net.loss(tape, p, parts[s].0.clone())?, ()))).unwrap()
            });
            params.ids().map(|id| params.grad(id).data().to_vec()).collect()
        };
        let (f32s, one, two) = (grads(Precision::F32, 1), grads(Precision::Bf16, 1), grads(Precision::Bf16, 2));
        assert_eq!(one, two, "the thread count changed bf16 gradients");
        for (a, b) in f32s.iter().zip(&one) {
            let scale = a.iter().fold(0f32, |m, x| m.max(x.abs()));
            let diff = a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
            assert!(diff > 0.0, "a gradient came out as in f32: the switch did not reach its products");
            assert!(diff <= 0.03 * scale, "bf16 moved a gradient by {diff} (largest element {scale})");
        }
    }

    #[test]
    fn rows_are_shared_out_whole_and_weighted_by_their_share() {
        let parts = split_rows(10, 3);
        assert_eq!(parts.iter().map(|p| p.0.clone()).collect::<Vec<_>>(), vec![0..4, 4..7, 7..10]);
        assert!((parts.iter().map(|p| p.1).sum::<f32>() - 1.0).abs() < 1e-6);
    }
}
