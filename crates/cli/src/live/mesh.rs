//! `mesh`'s progress on a terminal: discovery, then pairs done of each phase with ETA.
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use mtuperf_engine::mesh::{MeshNetwork, MeshNode, MeshObserver, MeshTests, PairResult, Plan};

/// A progress bar on stderr (only on a terminal): pairs done of the phase, ETA.
pub struct Progress {
    pub bar: ProgressBar,
    /// The invocation's sink: the engine calls from its own threads.
    out: std::sync::Arc<crate::out::Sink>,
}

impl Progress {
    pub fn new(json: bool) -> Progress {
        let bar = if json || !crate::progress::stderr_is_terminal() {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        bar.set_message("discovering the nodes' interfaces");
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar,
            out: crate::out::current(),
        }
    }
}

impl MeshObserver for Progress {
    fn discovered(&self, nodes: &[MeshNode], networks: &[MeshNetwork]) {
        let down = nodes.iter().filter(|n| n.error.is_some()).count();
        let nets: Vec<String> = networks
            .iter()
            .map(|n| format!("{} {} ({} nodes)", n.name, n.cidr, n.members.len()))
            .collect();
        self.bar.println(format!(
            "  {} nodes ({down} unreachable), networks: {}",
            nodes.len(),
            nets.join(", ")
        ));
    }
    /// Said on stderr in every format (JSON included): how long the run may take.
    fn plan(&self, plan: &Plan) {
        let line = format!(
            "  {} pairs; deadline {} from the start (if every pair test took its whole deadline)",
            plan.pairs,
            humantime::format_duration(Duration::from_secs(plan.deadline.as_secs()))
        );
        if self.bar.is_hidden() {
            let _in = self.out.enter();
            errln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
    fn phase(&self, test: MeshTests, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(0);
        self.bar.reset_eta();
        self.bar.set_style(
            ProgressStyle::with_template(
                "  {msg:8} {bar:40} {pos}/{len} pairs  {elapsed} elapsed, ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        self.bar.set_message(match test {
            MeshTests::Path => "path",
            MeshTests::Rr => "rr",
            MeshTests::Stream => "stream",
            MeshTests::Doctor => "doctor",
        });
    }
    fn pair_done(&self, _pair: &PairResult) {
        self.bar.inc(1);
    }
}
