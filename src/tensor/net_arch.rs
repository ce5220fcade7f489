//! A net's architecture declared once, as data: the text its file's header holds is a
//! [`Field`] table (fixed text, widths, words), and its tensors are a list of [`Layer`]s (a
//! dense or convolutional layer is its weight and bias; anything else a named tensor). Every
//! system's architecture says only that, and how its fields map to its own type; reading
//! the text (with the field and place a refusal names), writing it and the tensor shapes a
//! file must hold are written here, once, for all of them, as Stockfish's `nnue/` declares
//! a net as a composition of layer types whose reading and writing are the layers' own.

use super::layers::conv::Conv2d;

/// One field of an architecture's header text.
#[derive(Clone, Copy, Debug)]
pub enum Field {
    /// Fixed text (`8x8x7-c`, `/`, `-1`).
    Text(&'static str),
    /// A whole number within `min..=max`, called `name` in a refusal.
    Width { name: &'static str, min: usize, max: usize },
    /// Whole numbers joined by `-`, from `len.0` to `len.1` of them, each within `min..=max`.
    Widths { name: &'static str, len: (usize, usize), min: usize, max: usize },
    /// One of `words`.
    Word { name: &'static str, words: &'static [&'static str] },
}

/// What a field holds in one architecture (a [`Field::Text`] holds nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Width(usize),
    Widths(Vec<usize>),
    Word(&'static str),
}

/// The values read from a header, in the order of the fields, taken one at a time by the
/// architecture that declared them (a value of another type than its field's is a bug of
/// that declaration, not of the file).
pub struct Values(std::vec::IntoIter<Value>);

impl Values {
    pub fn width(&mut self) -> usize {
        match self.0.next() {
            Some(Value::Width(n)) => n,
            v => panic!("the architecture's form declares a width here, not {v:?}"),
        }
    }

    pub fn widths(&mut self) -> Vec<usize> {
        match self.0.next() {
            Some(Value::Widths(v)) => v,
            v => panic!("the architecture's form declares widths here, not {v:?}"),
        }
    }

    pub fn word(&mut self) -> &'static str {
        match self.0.next() {
            Some(Value::Word(w)) => w,
            v => panic!("the architecture's form declares a word here, not {v:?}"),
        }
    }
}

/// One layer as a net file holds it, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layer {
    /// `{name}.w` (inputs × outputs, a row per input) and `{name}.b` (1 × outputs).
    Dense { name: String, inputs: usize, outputs: usize },
    /// `{name}.w` (a row per input of a window, `kh·kw·in_c` × `out_c`) and `{name}.b`.
    Conv { name: String, conv: Conv2d },
    /// A dense layer whose weight and bias have names of their own (NeuroChess's `v.w1`, `v.b1`).
    Named { weight: &'static str, bias: &'static str, inputs: usize, outputs: usize },
    /// One tensor.
    Tensor { name: String, rows: usize, cols: usize },
}

impl Layer {
    pub fn dense(name: impl Into<String>, inputs: usize, outputs: usize) -> Layer {
        Layer::Dense { name: name.into(), inputs, outputs }
    }

    pub fn conv(name: impl Into<String>, conv: Conv2d) -> Layer {
        Layer::Conv { name: name.into(), conv }
    }

    /// Its tensors as (name, rows, columns), in file order.
    pub fn tensors(&self) -> Vec<(String, usize, usize)> {
        let pair = |w: String, b: String, rows: usize, cols: usize| vec![(w, rows, cols), (b, 1, cols)];
        match self {
            Layer::Dense { name, inputs, outputs } => pair(format!("{name}.w"), format!("{name}.b"), *inputs, *outputs),
            Layer::Conv { name, conv } => pair(format!("{name}.w"), format!("{name}.b"), conv.weight_shape().0, conv.out_c),
            Layer::Named { weight, bias, inputs, outputs } => pair(weight.to_string(), bias.to_string(), *inputs, *outputs),
            Layer::Tensor { name, rows, cols } => vec![(name.clone(), *rows, *cols)],
        }
    }
}

/// A net's architecture: its header text's [`Field`]s and its [`Layer`]s. Reading and
/// writing the text and the tensors' shapes are provided.
pub trait Architecture: Sized {
    /// The header text, field by field.
    const FORM: &'static [Field];
    /// The values of the fields that hold one ([`Field::Text`] holds none), in order.
    fn values(&self) -> Vec<Value>;
    /// The architecture from the values a header holds (each within its field's bounds), or
    /// what else is wrong with them (a rule across fields: DeepChess's tower starts at 773).
    fn from_values(values: Values) -> Result<Self, String>;
    /// Its layers, in the order of the file's tensors.
    fn layers(&self) -> Vec<Layer>;

    /// The header's text, e.g. `773-32-32/32-2`.
    fn describe(&self) -> String {
        let mut values = self.values().into_iter();
        let mut out = String::new();
        for f in Self::FORM {
            if let Field::Text(t) = f {
                out.push_str(t);
                continue;
            }
            match values.next() {
                Some(Value::Width(n)) => out.push_str(&n.to_string()),
                Some(Value::Widths(v)) => out.push_str(&v.iter().map(usize::to_string).collect::<Vec<_>>().join("-")),
                Some(Value::Word(w)) => out.push_str(w),
                None => panic!("{}: fewer values than fields", std::any::type_name::<Self>()),
            }
        }
        out
    }

    /// The architecture `text` names, or `None`.
    fn parse(text: &str) -> Option<Self> {
        Self::read(text).ok()
    }

    /// The architecture `text` names, or a refusal naming the text, the field and the place.
    fn read(text: &str) -> Result<Self, String> {
        read_fields(Self::FORM, text).and_then(|v| Self::from_values(Values(v.into_iter()))).map_err(|why| format!("bad architecture '{}': {why}", crate::io::text::cut(text, 120)))
    }

    /// Every tensor as (name, rows, columns), in the file's order.
    fn shapes(&self) -> Vec<(String, usize, usize)> {
        self.layers().iter().flat_map(Layer::tensors).collect()
    }
}

/// The digits at the start of `s` (as many as there are).
fn digits(s: &str) -> &str {
    &s[..s.bytes().take_while(u8::is_ascii_digit).count()]
}

/// A number at the start of `rest` for field `name`, within `min..=max`, and what follows it.
fn number<'a>(name: &str, rest: &'a str, min: usize, max: usize) -> Result<(usize, &'a str), String> {
    let d = digits(rest);
    if d.is_empty() {
        return Err(format!("{name}: a number expected at '{}'", crate::io::text::cut(rest, 24)));
    }
    match d.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok((n, &rest[d.len()..])),
        _ => Err(format!("{name}: {} is not within {min} to {max}", crate::io::text::cut(d, 24))),
    }
}

/// The values of `form`'s fields in `text`, or where it departs from them.
fn read_fields(form: &[Field], text: &str) -> Result<Vec<Value>, String> {
    let mut rest = text;
    let mut out = Vec::new();
    for f in form {
        match *f {
            Field::Text(t) => {
                rest = rest.strip_prefix(t).ok_or_else(|| format!("'{t}' expected at '{}'", crate::io::text::cut(rest, 24)))?;
            }
            Field::Width { name, min, max } => {
                let (n, r) = number(name, rest, min, max)?;
                out.push(Value::Width(n));
                rest = r;
            }
            Field::Widths { name, len: (lo, hi), min, max } => {
                let mut v = Vec::new();
                loop {
                    let (n, r) = number(name, rest, min, max)?;
                    v.push(n);
                    rest = r;
                    // A '-' continues the list only when a number follows it.
                    match rest.strip_prefix('-') {
                        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) && v.len() < hi => rest = r,
                        _ => break,
                    }
                }
                if v.len() < lo || v.len() > hi {
                    return Err(format!("{name}: {} widths, not {lo} to {hi}", v.len()));
                }
                out.push(Value::Widths(v));
            }
            Field::Word { name, words } => {
                // The longest word that fits, so that no word hides a longer one it begins.
                let w = words.iter().filter(|w| rest.starts_with(**w)).max_by_key(|w| w.len());
                let w = w.ok_or_else(|| format!("{name}: one of {} expected at '{}'", words.join(", "), crate::io::text::cut(rest, 24)))?;
                out.push(Value::Word(w));
                rest = &rest[w.len()..];
            }
        }
    }
    if !rest.is_empty() {
        return Err(format!("unexpected '{}' after the architecture", crate::io::text::cut(rest, 24)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small architecture of every kind of field: `in-W-…-W/act-c{n}`.
    #[derive(Debug, PartialEq)]
    struct Toy {
        widths: Vec<usize>,
        act: &'static str,
        c: usize,
    }

    impl Architecture for Toy {
        const FORM: &'static [Field] = &[
            Field::Widths { name: "widths", len: (2, 4), min: 1, max: 99 },
            Field::Text("/"),
            Field::Word { name: "act", words: &["lin", "linear", "relu"] },
            Field::Text("-c"),
            Field::Width { name: "c", min: 0, max: 9 },
        ];
        fn values(&self) -> Vec<Value> {
            vec![Value::Widths(self.widths.clone()), Value::Word(self.act), Value::Width(self.c)]
        }
        fn from_values(mut v: Values) -> Result<Toy, String> {
            let (widths, act, c) = (v.widths(), v.word(), v.width());
            if widths[0] != 7 {
                return Err(format!("the input is 7, not {}", widths[0]));
            }
            Ok(Toy { widths, act, c })
        }
        fn layers(&self) -> Vec<Layer> {
            let mut l: Vec<Layer> = self.widths.windows(2).enumerate().map(|(i, w)| Layer::dense(format!("l.{i}"), w[0], w[1])).collect();
            l.push(Layer::Named { weight: "x.w1", bias: "x.b1", inputs: 1, outputs: self.c });
            l.push(Layer::Tensor { name: "t".into(), rows: 2, cols: 3 });
            l
        }
    }

    #[test]
    fn an_architecture_reads_back_what_it_writes_and_says_where_a_text_departs() {
        for t in ["7-3/relu-c0", "7-3-2-1/linear-c9", "7-1/lin-c5"] {
            let a = Toy::read(t).unwrap();
            assert_eq!(a.describe(), t);
        }
        assert_eq!(Toy::read("7-3-2/linear-c4").unwrap().act, "linear", "the longest word");
        let refusals = [
            ("7/relu-c0", "widths: 1 widths, not 2 to 4"),
            ("7-3-2-1-5/relu-c0", "'/' expected at '-5/relu-c0'"),
            ("8-3/relu-c0", "the input is 7, not 8"),
            ("7-100/relu-c0", "widths: 100 is not within 1 to 99"),
            ("7-3/tanh-c0", "act: one of lin, linear, relu expected at 'tanh-c0'"),
            ("7-3/relu-c10", "c: 10 is not within 0 to 9"),
            ("7-3/relu-c", "c: a number expected at ''"),
            ("7-3/relu-c1x", "unexpected 'x' after the architecture"),
            ("7-+3/relu-c1", "widths: 1 widths, not 2 to 4"),
            ("7-99999999999999999999999/relu-c1", "widths: 99999999999999999999999 is not within 1 to 99"),
        ];
        for (t, why) in refusals {
            assert_eq!(Toy::read(t).unwrap_err(), format!("bad architecture '{t}': {why}"), "{t}");
            assert!(Toy::parse(t).is_none());
        }
        let shapes = Toy::read("7-3-2/relu-c4").unwrap().shapes();
        let want = [("l.0.w", 7, 3), ("l.0.b", 1, 3), ("l.1.w", 3, 2), ("l.1.b", 1, 2), ("x.w1", 1, 4), ("x.b1", 1, 4), ("t", 2, 3)];
        assert_eq!(shapes, want.map(|(n, r, c)| (n.to_string(), r, c)));
    }

    #[test]
    fn a_conv_layer_holds_a_row_per_input_of_its_window() {
        let conv = Conv2d { in_h: 8, in_w: 8, in_c: 7, out_c: 400, kh: 4, kw: 4, stride: 1, pad: 0 };
        assert_eq!(Layer::conv("conv1", conv).tensors(), vec![("conv1.w".to_string(), 112, 400), ("conv1.b".to_string(), 1, 400)]);
    }
}
