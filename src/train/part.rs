//! What a part of a run belongs to. A resumed run takes files up instead of making them again
//! (a finished net, a checkpoint, a snapshot); one copied from another run, or left from an
//! earlier one, passes every check of its format and shapes and would end in nets of no run
//! at all. So each part records in its header the settings and inputs it is a function of
//! (the seed, the data, its schedule, which variant it is), and the run checks them before it
//! uses the file or writes anything.

use std::path::Path;

#[derive(Clone)]
struct Entry {
    key: String,
    value: String,
    /// What to call it in messages: the flag or the folder that sets it.
    label: String,
    /// Every file of the part has always recorded it: one without it is refused. Keys
    /// recorded later are compared only where the file has them, so that a run begun by an
    /// earlier build still resumes.
    required: bool,
}

/// The header entries that say which run, and which part of it, a file belongs to.
#[derive(Clone, Default)]
pub struct Part {
    entries: Vec<Entry>,
}

impl Part {
    pub fn new() -> Part {
        Part::default()
    }

    /// With `key` = `value` (newlines become spaces, as in `run.txt`); `label` names it in
    /// messages.
    pub fn with(mut self, key: &str, value: impl ToString, label: &str, required: bool) -> Part {
        let value = value.to_string().replace(['\n', '\r'], " ");
        self.entries.retain(|e| e.key != key);
        self.entries.push(Entry { key: key.into(), value, label: label.into(), required });
        self
    }

    /// A file's header: `base`, then this part's entries `base` does not hold.
    pub fn header(&self, base: &[(String, String)]) -> Vec<(String, String)> {
        let mut out = base.to_vec();
        for e in &self.entries {
            if !base.iter().any(|(k, _)| *k == e.key) {
                out.push((e.key.clone(), e.value.clone()));
            }
        }
        out
    }

    /// Whether the file at `file`, its header `meta`, belongs to this part: `Err` names the
    /// file and every entry that differs, with both values.
    pub fn check(&self, file: &Path, meta: &[(String, String)]) -> Result<(), String> {
        let mut differ = Vec::new();
        for e in &self.entries {
            match meta.iter().find(|(k, _)| *k == e.key).map(|(_, v)| v.as_str()) {
                Some(v) if v == e.value => {}
                None if !e.required => {}
                found => differ.push(format!("  {}: the file's is {}, this run's '{}'", e.label, found.map_or("missing".to_string(), |v| format!("'{v}'")), e.value)),
            }
        }
        if differ.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{} is not a part of this run:\n{}\nnothing was changed: move the file away to make this part again, or use it with the run it came from",
            file.display(),
            differ.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_part_names_each_difference_with_both_values() {
        let p = Part::new().with("seed", 1, "--seed", true).with("variant", "ebnn", "variant", true).with("schedule", "V 8", "V's schedule", false);
        let f = Path::new("run/ebnn/checkpoint.dcw");
        assert_eq!(p.check(f, &kv(&[("seed", "1"), ("variant", "ebnn"), ("schedule", "V 8")])), Ok(()));
        // A key recorded later is compared only where the file has it.
        assert_eq!(p.check(f, &kv(&[("seed", "1"), ("variant", "ebnn")])), Ok(()));
        let err = p.check(f, &kv(&[("seed", "2"), ("schedule", "V 4")])).unwrap_err();
        assert!(err.starts_with("run/ebnn/checkpoint.dcw is not a part of this run:\n"), "{err}");
        assert!(err.contains("  --seed: the file's is '2', this run's '1'\n"), "{err}");
        assert!(err.contains("  variant: the file's is missing, this run's 'ebnn'\n"), "{err}");
        assert!(err.contains("  V's schedule: the file's is 'V 4', this run's 'V 8'\n"), "{err}");
        assert_eq!(p.header(&kv(&[("profile", "tiny"), ("seed", "1")])), kv(&[("profile", "tiny"), ("seed", "1"), ("variant", "ebnn"), ("schedule", "V 8")]));
    }
}
