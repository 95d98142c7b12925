//! `path`'s observer: each direction's search as it goes, on stderr when it is a
//! terminal.
use mtuperf_engine::path;

/// Each direction's search as it goes, on stderr when it is a terminal: the size just
/// tried (IP packet bytes), its fate, the largest size that passed and the smallest
/// that failed so far, the probes sent; each direction's last state stays as a line.
pub struct Live {
    bar: indicatif::ProgressBar,
    direction: Option<path::Direction>,
    passed: u32,
    failed: Option<u32>,
    probes: u32,
}

impl Live {
    pub fn new() -> Live {
        Live {
            bar: if crate::out::stderr_is_terminal() {
                indicatif::ProgressBar::new_spinner()
            } else {
                indicatif::ProgressBar::hidden()
            },
            direction: None,
            passed: 0,
            failed: None,
            probes: 0,
        }
    }

    /// Leaves the finished direction's last state as a line above the spinner.
    fn done(&self) {
        if self.direction.is_some() {
            self.bar.println(format!("  {}", self.bar.message()));
        }
    }

    pub fn finish(&self) {
        self.done();
        self.bar.finish_and_clear();
    }

    pub fn step(&mut self, s: path::Step) {
        if self.direction != Some(s.direction) {
            self.done();
            self.direction = Some(s.direction);
            (self.passed, self.failed, self.probes) = (0, None, 0);
        }
        self.probes += 1;
        let fate = match s.outcome {
            path::Outcome::Passed => {
                self.passed = self.passed.max(s.size);
                "passed".to_string()
            }
            path::Outcome::TooBig { mtu, .. } => format!("too big (MTU {mtu})"),
            path::Outcome::Lost => "no answer".to_string(),
        };
        if s.outcome != path::Outcome::Passed && s.size > self.passed {
            self.failed = Some(self.failed.map_or(s.size, |f| f.min(s.size)));
        }
        let name = match s.direction {
            path::Direction::Forward => "forward",
            path::Direction::Reverse => "reverse",
        };
        let failed = self
            .failed
            .map_or(String::new(), |f| format!(", fails {f}"));
        self.bar.set_message(format!(
            "{name}: {} {fate}; passes {}{failed} ({} probes)",
            s.size, self.passed, self.probes
        ));
        self.bar.tick();
    }
}
