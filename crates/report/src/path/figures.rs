//! The figures of a path run: what export, the tables and the HTML page read.

use super::Document;
use crate::figure::Figure;

/// Whether the path carries what was expected, the expected MTU, and per searched
/// direction: the MTU it reads as, the largest size that passed, the search's top
/// (the sender's interface MTU), probes sent and probes left unanswered. Sizes are IP
/// packet bytes.
pub fn figures(doc: &Document) -> Vec<Figure> {
    let mut f =
        vec![Figure::new("ok", "bool", f64::from(u8::from(doc.ok))).label("mode", doc.mode_name())];
    let (dirs, expect) = doc.directions();
    if !dirs.is_empty() {
        f.push(Figure::new("expect", "bytes", f64::from(expect)));
    }
    for (name, d, mtu) in dirs {
        f.extend(
            [
                Figure::new("path_mtu", "bytes", f64::from(mtu)),
                Figure::new("largest_passing", "bytes", f64::from(d.largest_ok)),
                Figure::new("search_top", "bytes", f64::from(d.top)),
                Figure::new("probes", "probes", f64::from(d.probes)),
                Figure::new("unanswered", "probes", f64::from(d.lost)),
            ]
            .map(|x| x.label("direction", name)),
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::tests::mismatch;

    /// The figures are the searches' numbers, per direction, with the expected MTU
    /// (the HTML table reads them).
    #[test]
    fn figures_carry_each_directions_search() {
        let d = mismatch();
        let f = figures(&d);
        let get = |name: &str, dir: &str| {
            f.iter()
                .find(|x| x.name == name && x.labels.contains(&("direction", dir.to_string())))
                .map(|x| x.value)
        };
        assert_eq!(crate::figure::figure(&f, "ok").map(|x| x.value), Some(0.0));
        assert_eq!(
            crate::figure::figure(&f, "expect").map(|x| x.value),
            Some(9000.0)
        );
        assert_eq!(get("path_mtu", "forward"), Some(1500.0));
        assert_eq!(get("largest_passing", "forward"), Some(1504.0));
        assert_eq!(get("search_top", "forward"), Some(9000.0));
        assert_eq!(get("path_mtu", "reverse"), Some(1500.0));
        assert_eq!(get("unanswered", "reverse"), Some(0.0));
    }
}
