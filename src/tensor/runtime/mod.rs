//! The thread floor of the numeric engine, below the kernels: the thread count and the
//! splits of work (`threads`), run on threads started once and kept (`crew`), the help a
//! thread out of work gives to kernels still running (`help`), and how freed memory goes
//! back to the system (`memory`). It imports nothing else of `tensor`; kernels, layers and
//! the data-parallel step ([`crate::tensor::optim::shards`]) build on it. Nothing here
//! changes a bit of a result: work is split so that every element is computed the same way.

pub(crate) mod crew;
pub mod help;
pub mod memory;
pub mod threads;
