//! The fourteen networks (seed 002, "the neural network architecture"): each agent, White and
//! Black, has a piece selector and six move selectors (one per piece type), all of one shape,
//! none shared. The text gives "32, 128, and 32 filters … flattened into 128 nodes … an output
//! of 64 nodes" and no pooling; its diagram (and the author's code) give 3×3 kernels without
//! padding, ReLU after every convolution and after a hidden dense layer of 128, and a linear
//! output: 8×8×6 → 6×6×32 → 4×4×128 → 2×2×32 (= 128) → 128 → 64 values, one per square.
//!
//! Initialisation: the seed's ("10^(-7) … the first layer, … 10^(-6)" in the deeper ones,
//! uniform bounds in the author's code: the first convolution U(±1e-7), the other two
//! U(±1e-6), the dense layers U(±1/√fan_in), biases 0) is [`Init::Seed`]; it reaches the
//! later layers with the position at ~1e-13, below what a bias step leaves of it, so training
//! blinds the nets (docs/results.md, seed 002). Our recipe starts every weight at
//! U(±1/√fan_in) ([`Init::Lecun`]), a stated departure; the author recipe keeps the seed's.
//!
//! Parameter names: `{white,black}.{piece,pawn,knight,bishop,rook,queen,king}.{c1,c2,c3,fc,out}.{w,b}`.
//! Inference for play and self-play runs without a tape, one position at a time ([`super::infer`]).

use super::features::{INPUTS, PLANES};
use crate::chess::{Color, Role};
use crate::tensor::{Architecture, Conv2d, Field, Layer, Matrix, ParamId, Params, Result, Rng, Tape, TensorError, Value, Values, Var};

/// The header's kind of an agents file.
pub const KIND: &str = "selfplay-agents";

/// Widths of the three convolutions and of the hidden dense layer (the seed's: 32, 128, 32,
/// 128). Kernels (3×3, no padding), the input and the 64 outputs are fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    pub c1: usize,
    pub c2: usize,
    pub c3: usize,
    pub fc: usize,
}

/// One of an agent's seven nets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Net {
    Piece,
    Move(Role),
}

impl Net {
    /// The seven, in parameter order: the piece selector, then the move selectors by role.
    pub const ALL: [Net; 7] = [Net::Piece, Net::Move(Role::Pawn), Net::Move(Role::Knight), Net::Move(Role::Bishop), Net::Move(Role::Rook), Net::Move(Role::Queen), Net::Move(Role::King)];

    pub fn index(self) -> usize {
        match self {
            Net::Piece => 0,
            Net::Move(r) => 1 + r.index(),
        }
    }

    pub fn name(self) -> &'static str {
        ["piece", "pawn", "knight", "bishop", "rook", "queen", "king"][self.index()]
    }
}

impl Arch {
    pub const SEED: Arch = Arch { c1: 32, c2: 128, c3: 32, fc: 128 };

    /// The three convolutions: 8×8 → 6×6 → 4×4 → 2×2.
    pub fn convs(&self) -> [Conv2d; 3] {
        let c = |hw: usize, in_c: usize, out_c: usize| Conv2d { in_h: hw, in_w: hw, in_c, out_c, kh: 3, kw: 3, stride: 1, pad: 0 };
        [c(8, PLANES, self.c1), c(6, self.c1, self.c2), c(4, self.c2, self.c3)]
    }

    /// The layers of the net named `prefix` (e.g. `white.piece`), in creation order: the
    /// three convolutions `c1`, `c2`, `c3`, the hidden layer `fc` and the 64 values `out`.
    fn net_layers(&self, prefix: &str) -> Vec<Layer> {
        let [a, b, c] = self.convs();
        vec![
            Layer::conv(format!("{prefix}.c1"), a),
            Layer::conv(format!("{prefix}.c2"), b),
            Layer::conv(format!("{prefix}.c3"), c),
            Layer::dense(format!("{prefix}.fc"), c.out_len(), self.fc),
            Layer::dense(format!("{prefix}.out"), self.fc, 64),
        ]
    }

    /// Multiply-adds × 2 of one net's forward pass on one position.
    pub fn flops(&self) -> f64 {
        let [a, b, c] = self.convs();
        a.flops() + b.flops() + c.flops() + 2.0 * (c.out_len() * self.fc + self.fc * 64) as f64
    }
}

/// `8x8x6-c32k3-c128k3-c32k3-ip128-64`: the three filter counts and the hidden width (1 to
/// 1,024 each) between the fixed input, kernels and 64 outputs.
impl Architecture for Arch {
    const FORM: &'static [Field] = &[
        Field::Text("8x8x6-c"),
        Field::Width { name: "c1", min: 1, max: 1024 },
        Field::Text("k3-c"),
        Field::Width { name: "c2", min: 1, max: 1024 },
        Field::Text("k3-c"),
        Field::Width { name: "c3", min: 1, max: 1024 },
        Field::Text("k3-ip"),
        Field::Width { name: "fc", min: 1, max: 1024 },
        Field::Text("-64"),
    ];

    fn values(&self) -> Vec<Value> {
        [self.c1, self.c2, self.c3, self.fc].into_iter().map(Value::Width).collect()
    }

    fn from_values(mut v: Values) -> std::result::Result<Arch, String> {
        Ok(Arch { c1: v.width(), c2: v.width(), c3: v.width(), fc: v.width() })
    }

    /// Both agents' nets, White's first, each in the order of [`Net::ALL`].
    fn layers(&self) -> Vec<Layer> {
        ["white", "black"].into_iter().flat_map(|colour| Net::ALL.into_iter().flat_map(move |net| self.net_layers(&format!("{colour}.{}", net.name())))).collect()
    }
}

/// The ids of one net's ten tensors (weight, bias of c1, c2, c3, fc, out).
#[derive(Clone, Copy, Debug)]
pub struct NetIds([ParamId; 10]);

/// Where each net's tensors are in a `Params`: `ids[colour][net]`.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub arch: Arch,
    pub ids: [[NetIds; 7]; 2],
}

/// Both agents: the layout and the parameters.
pub struct Agents {
    pub layout: Layout,
    pub params: Params,
}

/// How the weights start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// The seed's: convolutions U(±1e-7) then U(±1e-6), dense layers U(±1/√fan_in).
    Seed,
    /// Every weight U(±1/√fan_in) (LeCun uniform), the convolutions included.
    Lecun,
}

impl Init {
    pub fn parse(s: &str) -> Option<Init> {
        match s {
            "seed" => Some(Init::Seed),
            "lecun" => Some(Init::Lecun),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Init::Seed => "seed",
            Init::Lecun => "lecun",
        }
    }
    /// The bound of tensor `suffix` (e.g. `c1.w`) with `rows` inputs per output.
    fn bound(self, suffix: &str, rows: usize) -> f32 {
        match (self, suffix) {
            (Init::Seed, "c1.w") => 1e-7,
            (Init::Seed, "c2.w" | "c3.w") => 1e-6,
            _ if suffix.ends_with(".w") => 1.0 / (rows as f32).sqrt(),
            _ => 0.0,
        }
    }
}

impl Agents {
    /// The seed's initialisation.
    pub fn new(arch: Arch, rng: &mut Rng) -> Agents {
        Agents::with_init(arch, Init::Seed, rng)
    }

    pub fn with_init(arch: Arch, init: Init, rng: &mut Rng) -> Agents {
        let tensors = arch
            .shapes()
            .into_iter()
            .map(|(name, rows, cols)| {
                let suffix = name.splitn(3, '.').nth(2).expect("colour.net.tensor");
                let bound = init.bound(suffix, rows);
                let mut m = Matrix::zeros(rows, cols);
                if bound > 0.0 {
                    m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-bound, bound));
                }
                (name, m)
            })
            .collect();
        Agents::assemble(arch, tensors)
    }
}

impl Layout {
    /// The ten tensors of the net named `prefix` (e.g. `white.piece`) in `params`.
    fn net_ids(params: &Params, arch: Arch, prefix: &str) -> Result<NetIds> {
        let v: Vec<ParamId> = arch
            .net_layers(prefix)
            .iter()
            .flat_map(Layer::tensors)
            .map(|(name, _, _)| params.find(&name).ok_or_else(|| TensorError::Argument { what: "agents".into(), detail: format!("no tensor '{name}'") }))
            .collect::<Result<_>>()?;
        Ok(NetIds(v.try_into().expect("ten tensors a net")))
    }

    /// The layout of parameters made as [`Arch::shapes`] (a training run's `Params`).
    pub fn of(params: &Params, arch: Arch) -> Result<Layout> {
        let agent = |colour: &str| -> Result<[NetIds; 7]> {
            let v: Vec<NetIds> = Net::ALL.into_iter().map(|n| Layout::net_ids(params, arch, &format!("{colour}.{}", n.name()))).collect::<Result<_>>()?;
            Ok(v.try_into().expect("seven nets an agent"))
        };
        Ok(Layout { arch, ids: [agent("white")?, agent("black")?] })
    }

    /// A layout whose fourteen slots all read the one net `prefix` (e.g. `white.piece`) of
    /// `params`: one net's update on its own parameters, as a benchmark compares it.
    pub fn single(params: &Params, arch: Arch, prefix: &str) -> Result<Layout> {
        let one = Layout::net_ids(params, arch, prefix)?;
        Ok(Layout { arch, ids: [[one; 7]; 2] })
    }

    /// The 64 values of `net` of `colour`'s agent for a batch `x` (`batch × 384`) on a tape.
    pub fn net_on_tape(&self, params: &Params, tape: &mut Tape, x: Var, colour: Color, net: Net) -> Result<Var> {
        if tape.value(x).cols() != INPUTS {
            return Err(TensorError::Argument { what: "agent input".into(), detail: format!("{} columns, not {INPUTS}", tape.value(x).cols()) });
        }
        let id = self.ids[colour.index()][net.index()].0;
        let mut h = x;
        for (k, shape) in self.arch.convs().into_iter().enumerate() {
            h = tape.conv2d_relu(params, h, id[2 * k], id[2 * k + 1], shape)?;
        }
        h = tape.affine_relu(params, h, id[6], id[7])?;
        tape.affine(params, h, id[8], id[9])
    }

    /// The tensors of one net (for per-net gradient scaling).
    pub fn tensors(&self, colour: Color, net: Net) -> [ParamId; 10] {
        self.ids[colour.index()][net.index()].0
    }
}

impl Agents {
    fn assemble(arch: Arch, tensors: Vec<(String, Matrix)>) -> Agents {
        let mut params = Params::new();
        for (n, m) in tensors {
            params.add(&n, m).expect("distinct names");
        }
        let layout = Layout::of(&params, arch).expect("the names just added");
        Agents { layout, params }
    }
}

impl crate::tensor::NetFile for Agents {
    const KIND: &'static str = KIND;
    const WHAT: &'static str = "self-play agents";
    type Arch = Arch;

    fn arch(&self) -> Arch {
        self.layout.arch
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: Arch, tensors: Vec<(String, Matrix)>) -> Result<Agents> {
        Ok(Agents::assemble(arch, tensors))
    }
}

/// Small agents (5-7-3 filters, 9 dense units) with weights of a usable scale, U(±0.5): what
/// the tests of the nets' files and their inference run on.
#[cfg(test)]
pub(crate) fn small_agents() -> Agents {
    let mut ag = Agents::new(Arch { c1: 5, c2: 7, c3: 3, fc: 9 }, &mut Rng::new(2));
    let mut rng = Rng::new(3);
    let ids: Vec<ParamId> = ag.params.ids().collect();
    for id in ids {
        ag.params.value_mut(id).data_mut().iter_mut().for_each(|v| *v = rng.uniform(-0.5, 0.5));
    }
    ag
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::NetFile;

    #[test]
    fn the_seed_shapes() {
        let a = Arch::SEED;
        let [c1, c2, c3] = a.convs();
        assert_eq!((c1.out_h(), c2.out_h(), c3.out_h()), (6, 4, 2));
        assert_eq!(c3.out_len(), 128, "flattened into 128 nodes");
        let per_net: usize = a.net_layers("white.piece").iter().flat_map(Layer::tensors).map(|(_, r, c)| r * c).sum();
        assert_eq!(per_net, 54 * 32 + 32 + 288 * 128 + 128 + 1152 * 32 + 32 + 128 * 128 + 128 + 128 * 64 + 64);
        assert_eq!(a.shapes().len(), 140, "14 nets of 10 tensors");
        assert_eq!(Arch::parse(&a.describe()), Some(a));
        for bad in ["8x8x6-c32k3-c128k3-c32k3-ip128", "8x8x7-c32k3-c128k3-c32k3-ip128-64", "8x8x6-c0k3-c128k3-c32k3-ip128-64"] {
            assert!(Arch::parse(bad).is_none(), "{bad}");
        }
    }

    /// A saved file loads to the same values.
    #[test]
    fn files_round_trip() {
        let ag = small_agents();
        let arch = ag.layout.arch;
        let dir = std::env::temp_dir().join(format!("selfplay-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.dcw");
        ag.save(&f, &[("profile".into(), "test".into())]).unwrap();
        let (back, meta) = Agents::load(&f).unwrap();
        assert_eq!(back.layout.arch, arch);
        assert!(meta.iter().any(|(k, v)| k == "profile" && v == "test"));
        assert!(back.params.ids().zip(ag.params.ids()).all(|(a, b)| back.params.value(a).data() == ag.params.value(b).data()));
        std::fs::remove_dir_all(&dir).ok();
    }
}
