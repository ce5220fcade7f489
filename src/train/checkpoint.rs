//! What a training run saves after every epoch (parameters, optimizer state, where the
//! schedule stands) and the optimizer settings it rebuilds from.

use crate::tensor::{Adam, Matrix, Optimizer, Params, Sgd, WeightFile};
use std::path::Path;

/// Which optimizer a phase uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptCfg {
    /// SGD with the paper's per-epoch multiplicative decay, optional momentum.
    Sgd { lr: f32, decay: f32, momentum: f32 },
    /// SGD as Mocha and Caffe write it (`v ← μ·v − lr·g; w ← w + v`: the rate inside the
    /// velocity), its rate set by the caller every iteration (seed 003's "inv" policy).
    SgdMocha { lr: f32, momentum: f32 },
    /// Adam / AdamW (weight decay decoupled), with per-epoch decay.
    Adam { lr: f32, decay: f32, weight_decay: f32 },
}

impl OptCfg {
    pub fn build(self) -> Box<dyn Optimizer> {
        match self {
            OptCfg::Sgd { lr, decay, momentum } => Box::new(Sgd::new(lr).with_decay(decay).with_momentum(momentum)),
            OptCfg::SgdMocha { lr, momentum } => Box::new(Sgd::new(lr).with_momentum(momentum).with_lr_in_velocity(true)),
            OptCfg::Adam { lr, decay, weight_decay } => Box::new(Adam::adamw(lr, weight_decay).with_decay(decay)),
        }
    }

    pub fn describe(self) -> String {
        match self {
            OptCfg::Sgd { lr, decay, momentum } => format!("SGD lr {lr} x {decay}^epoch momentum {momentum}"),
            OptCfg::SgdMocha { lr, momentum } => format!("SGD (Mocha's momentum form) lr {lr} momentum {momentum}"),
            OptCfg::Adam { lr, decay, weight_decay } => format!("AdamW lr {lr} x {decay}^epoch wd {weight_decay}"),
        }
    }
}

/// A checkpoint: parameters, optimizer state and where the schedule stands.
pub struct Checkpoint {
    pub meta: Vec<(String, String)>,
    pub params: Vec<(String, Matrix)>,
    pub opt: Vec<(String, Matrix)>,
}

impl Checkpoint {
    pub fn save(path: &Path, meta: &[(String, String)], params: &Params, opt: &dyn Optimizer) -> crate::tensor::Result<()> {
        let mut tensors: Vec<(String, Matrix)> =
            params.ids().map(|id| (format!("net.{}", params.name(id)), params.value(id).clone())).collect();
        tensors.extend(opt.state().into_iter().map(|(n, m)| (format!("opt.{n}"), m)));
        let mut m = vec![("kind".to_string(), "deepchess-checkpoint".to_string())];
        m.extend_from_slice(meta);
        WeightFile { meta: m, tensors }.save(path)
    }

    pub fn load(path: &Path) -> crate::tensor::Result<Checkpoint> {
        let wf = WeightFile::load(path)?;
        if wf.meta("kind") != Some("deepchess-checkpoint") {
            return Err(crate::tensor::TensorError::format(&path.display().to_string(), "not a deepchess training checkpoint"));
        }
        let (mut params, mut opt) = (Vec::new(), Vec::new());
        for (n, m) in wf.tensors {
            if let Some(p) = n.strip_prefix("net.") {
                params.push((p.to_string(), m));
            } else if let Some(o) = n.strip_prefix("opt.") {
                opt.push((o.to_string(), m));
            }
        }
        Ok(Checkpoint { meta: wf.meta, params, opt })
    }

    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Copies the parameters into `params` and the optimizer's state into `opt`, both checked
    /// against the run (names, shapes, every tensor there and nothing else; `stepped`: the
    /// optimizer has taken steps, so all of its state must be there). On a refusal `params`
    /// and `opt` are unchanged.
    pub fn restore(&self, params: &mut Params, opt: &mut dyn Optimizer, stepped: bool, origin: &str) -> Result<(), String> {
        let wf = WeightFile { meta: Vec::new(), tensors: self.params.clone() };
        let mut restored = params.clone();
        restored.assign_from(&wf, origin).map_err(|e| e.to_string())?;
        opt.set_state(&self.opt, params, stepped).map_err(|e| format!("{origin}: {e}"))?;
        *params = restored;
        Ok(())
    }
}
