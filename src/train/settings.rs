//! What defines a training run, recorded in its folder as `run.txt` (`key=value` lines) before
//! its first epoch. A resumed run must draw exactly what the uninterrupted one drew, so
//! `--resume` compares the settings it was given with the recorded ones and refuses any
//! difference: otherwise the nets it leaves would belong to no run at all.

use std::path::Path;

/// The file in the run folder.
pub const FILE: &str = "run.txt";

/// How a setting takes part in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Defines the run: a difference is refused.
    Defining,
    /// Defining, but follows from the profile (unless a flag overrides it): reported only when
    /// the profile itself matches, else the profile's line says it all.
    FromProfile,
    /// Recorded for the reader; a difference is noted, not refused.
    Note,
}

/// One setting: its key in `run.txt`, its value, and how a user would name it.
#[derive(Clone, Debug)]
pub struct Setting {
    pub key: String,
    pub value: String,
    /// What to call it in messages: the flag(s) that set it.
    pub label: String,
    pub kind: Kind,
}

/// The settings of one invocation, in the order they are written and reported.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    pub settings: Vec<Setting>,
    /// The key whose difference makes `FromProfile` differences redundant.
    pub profile_key: Option<String>,
}

impl RunSettings {
    pub fn add(&mut self, key: &str, value: impl ToString, label: &str, kind: Kind) {
        let value = value.to_string().replace(['\n', '\r'], " ");
        debug_assert!(!key.contains('=') && !self.settings.iter().any(|s| s.key == key), "{key}");
        self.settings.push(Setting { key: key.to_string(), value, label: label.to_string(), kind });
    }

    pub fn to_text(&self) -> String {
        self.settings.iter().map(|s| format!("{}={}\n", s.key, s.value)).collect()
    }

    /// Writes `run.txt` into `dir` atomically.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        crate::io::write_atomic(&dir.join(FILE), self.to_text().as_bytes())
    }

    /// The settings recorded in `dir`, or `None` when it holds no `run.txt`.
    pub fn read(dir: &Path) -> Result<Option<Vec<(String, String)>>, String> {
        let path = dir.join(FILE);
        let text = match crate::io::files::read_regular(&path, 1 << 20, "run record") {
            Ok(b) => String::from_utf8(b).map_err(|_| format!("{}: not UTF-8 text", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("{} line {}: not key=value: '{line}'", path.display(), i + 1))?;
            out.push((k.to_string(), v.to_string()));
        }
        Ok(Some(out))
    }

    /// Whether a run with these settings may start or continue in `dir`: a folder holding a
    /// run (its `run.txt`, or a log) needs `resume`, and a resumed run must match what it
    /// recorded (`Err` says which, in the words of `deepchess train`; notes of accepted
    /// differences go to stderr). A folder from before `run.txt` existed is checked against
    /// what its checkpoint recorded. Returns the recorded settings (`None`: a new run, whose
    /// `run.txt` the caller writes once the inputs are known to load). The settings also go
    /// into the header of every file the run saves (`made.settings`).
    pub fn admit(&self, dir: &Path, resume: bool) -> Result<Option<Vec<(String, String)>>, String> {
        crate::io::provenance::settings(&self.settings.iter().map(|s| (s.key.clone(), s.value.clone())).collect::<Vec<_>>());
        let recorded = RunSettings::read(dir)?;
        if !resume && (recorded.is_some() || dir.join("log.csv").exists()) {
            return Err(format!("{} already holds a training run: add --resume to continue it, or choose another --out", dir.display()));
        }
        if !resume {
            return Ok(recorded);
        }
        let legacy;
        let against = match recorded.as_deref() {
            Some(r) => r,
            None => {
                let ck = dir.join("checkpoint.dcw");
                if !ck.exists() {
                    return Ok(None);
                }
                let wf = crate::tensor::WeightFile::load(&ck).map_err(|e| e.to_string())?;
                // Only the keys a checkpoint wrote in the same form as run.txt.
                legacy = wf.meta.into_iter().filter(|(k, _)| ["profile", "seed", "mirror"].contains(&k.as_str())).collect::<Vec<_>>();
                &legacy
            }
        };
        let notes = self.check(against).map_err(|refused| {
            format!("deepchess train --resume: {} was made with other settings; resume with its own, or choose another --out\n{refused}", dir.display())
        })?;
        for n in notes {
            eprintln!("note: {n} (the same files: continuing)");
        }
        Ok(recorded)
    }

    /// Compares with `recorded` (keys absent on either side are not compared: a run recorded
    /// by an older or newer build resumes on what both know). `Err` lists every refused
    /// difference, one per line, naming the setting and both values; `Ok` carries the notes.
    pub fn check(&self, recorded: &[(String, String)]) -> Result<Vec<String>, String> {
        let old = |key: &str| recorded.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let line = |s: &Setting, was: &str| format!("{}: this run was made with '{was}', resumed with '{}'", s.label, s.value);
        let differs = |s: &Setting| old(&s.key).filter(|&was| was != s.value);
        let profile_differs = self.profile_key.as_deref().is_some_and(|k| self.settings.iter().any(|s| s.key == k && differs(s).is_some()));
        let (mut refused, mut notes) = (Vec::new(), Vec::new());
        for s in &self.settings {
            let Some(was) = differs(s) else { continue };
            match s.kind {
                Kind::Defining => refused.push(line(s, was)),
                Kind::FromProfile if !profile_differs => refused.push(line(s, was)),
                Kind::FromProfile => {}
                Kind::Note => notes.push(line(s, was)),
            }
        }
        if refused.is_empty() {
            Ok(notes)
        } else {
            Err(refused.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(profile: &str, epochs: usize, seed: u64, path: &str) -> RunSettings {
        let mut s = RunSettings { profile_key: Some("profile".into()), ..Default::default() };
        s.add("profile", profile, "--profile", Kind::Defining);
        s.add("seed", seed, "--seed", Kind::Defining);
        s.add("epochs", epochs, "epochs (--profile, --epochs)", Kind::FromProfile);
        s.add("data.path", path, "--data", Kind::Note);
        s
    }

    fn parse(text: &str) -> Vec<(String, String)> {
        text.lines().map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap()).collect()
    }

    #[test]
    fn same_settings_pass_and_differences_are_named_with_both_values() {
        let rec = parse(&settings("tiny", 3, 1, "a").to_text());
        assert_eq!(settings("tiny", 3, 1, "a").check(&rec), Ok(vec![]));
        let err = settings("quick", 5, 1, "a").check(&rec).unwrap_err();
        assert_eq!(err, "--profile: this run was made with 'tiny', resumed with 'quick'");
        let err = settings("tiny", 5, 2, "a").check(&rec).unwrap_err();
        assert_eq!(
            err,
            "--seed: this run was made with '1', resumed with '2'\nepochs (--profile, --epochs): this run was made with '3', resumed with '5'"
        );
        let notes = settings("tiny", 3, 1, "b").check(&rec).unwrap();
        assert_eq!(notes, vec!["--data: this run was made with 'a', resumed with 'b'".to_string()]);
    }

    #[test]
    fn keys_only_one_side_knows_are_not_compared() {
        let rec = parse("profile=tiny\nold_key=1\n");
        assert_eq!(settings("tiny", 3, 1, "a").check(&rec), Ok(vec![]));
    }
}
