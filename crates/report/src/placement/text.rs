//! A run's placement in words: one end's line, and the text's `placement` line.

use std::fmt::Write as _;

use mtuperf_proto::placement::{format_cpu_list, Placement, SoftirqTime};

use super::PlacementSummary;

/// One end's placement: `threads on CPU 0 (pinned 0), NET_RX mostly CPU 1`.
pub fn end(p: Option<&Placement>) -> String {
    let Some(p) = p else {
        return "not recorded".into();
    };
    let seen = p.thread_cpus();
    let mut s = if seen.is_empty() {
        "threads not sampled".to_string()
    } else {
        format!("threads on CPU {}", format_cpu_list(&seen))
    };
    if let Some(c) = &p.pinned {
        let _ = write!(s, " (pinned {})", format_cpu_list(c));
    } else {
        let mut own: Vec<u32> = p.threads.iter().filter_map(|t| t.pinned).collect();
        own.sort_unstable();
        own.dedup();
        if own.is_empty() {
            s.push_str(" (unpinned)");
        } else {
            let _ = write!(
                s,
                " (one thread per CPU by rr's TCP steering: {})",
                format_cpu_list(&own)
            );
        }
    }
    if let Some(rx) = p.main_rx_cpu() {
        let _ = write!(s, ", NET_RX mostly CPU {rx}");
    }
    if let Some(cpu) = p.softirq.as_ref().and_then(SoftirqTime::main_cpu) {
        let si = p.softirq.as_ref().map_or(0, SoftirqTime::ticks);
        let _ = write!(
            s,
            ", softirq time {si} ticks of {} ms ± 1/CPU, mostly CPU {cpu}",
            p.softirq.as_ref().map_or(0, |t| t.tick_ns / 1_000_000)
        );
    }
    if !p.irqs.is_empty() {
        let irqs: Vec<String> = p
            .irqs
            .iter()
            .map(|i| format!("{}→{}", i.irq, i.cpus))
            .collect();
        let _ = write!(s, ", queue IRQs {}", irqs.join(" "));
    }
    s
}

/// The one text line: `placement  client …; agent …; ends share a CPU: yes`.
pub fn line(
    client: Option<&Placement>,
    agent: Option<&Placement>,
    summary: Option<&PlacementSummary>,
) -> Option<String> {
    let summary = summary?;
    let shared = match (summary.same_host, summary.shared_cpu) {
        (false, _) => "different hosts".to_string(),
        (true, Some(true)) => "ends share a CPU: yes".to_string(),
        (true, Some(false)) => "ends share a CPU: no (cross-CPU)".to_string(),
        (true, None) => "ends share a CPU: unknown".to_string(),
    };
    Some(format!(
        "  placement  client {}; agent {}; {shared}",
        end(client),
        end(agent)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::tests::on;
    use mtuperf_proto::placement::ThreadPlacement;

    #[test]
    fn threads_the_tool_pinned_itself_are_not_called_unpinned() {
        let mut p = on(0);
        p.pinned = None;
        assert!(end(Some(&p)).contains("(unpinned)"), "{}", end(Some(&p)));
        p.threads[0].pinned = Some(0);
        p.threads.push(ThreadPlacement {
            role: mtuperf_proto::placement::ThreadRole::Requester,
            cpus: vec![[1, 10]],
            pinned: Some(1),
        });
        let t = end(Some(&p));
        assert!(
            t.contains("one thread per CPU by rr's TCP steering: 0-1"),
            "{t}"
        );
        assert!(!t.contains("unpinned"), "{t}");
    }
}
