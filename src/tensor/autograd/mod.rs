//! Autograd: the tape of a forward pass (`tape`), its backward pass, one `match` arm per
//! op (`backward`), and the store of parameters and their gradients (`params`).

pub mod backward;
pub mod params;
pub mod tape;
