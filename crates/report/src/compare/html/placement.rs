//! The report's placement section: the comparison's policy and, per path, how its
//! repetitions (rr, stream, UDP stream) were placed, with the warning when the paths differ.

use std::fmt::Write as _;

use mtuperf_proto::placement::format_cpu_list;

use crate::compare::CompareDoc;
use crate::html::{esc, table};

pub fn section(d: &CompareDoc) -> String {
    let mut o = String::new();
    if d.placement.is_empty() && d.plan.placement.is_free() {
        return o;
    }
    o.push_str("<h2>Placement</h2>\n");
    let _ = writeln!(o, "<p>{}</p>", esc(d.plan.placement.describe()));
    if let Some(w) = &d.placement_warning {
        let _ = writeln!(o, "<p class=\"flag\">{}</p>", esc(w));
    }
    let rows: Vec<Vec<String>> = d
        .placement
        .iter()
        .map(|p| {
            vec![
                p.path.clone(),
                p.repetitions.to_string(),
                p.cross_cpu.to_string(),
                p.shared_cpu.to_string(),
                format_cpu_list(&p.client_cpus),
                format_cpu_list(&p.agent_cpus),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            &mut o,
            &[
                "path",
                "repetitions",
                "cross-CPU",
                "same CPU",
                "client threads on CPU",
                "agent threads on CPU",
            ],
            &rows,
        );
    }
    o
}
