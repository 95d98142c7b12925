//! `path`'s observer: each direction's search as it goes, on stderr when it is a
//! terminal.
use mtuperf_engine::path;

/// Each direction's search as it goes, on stderr when it is a terminal: the size just
/// tried (IP packet bytes), its fate, the largest size that passed and the smallest
/// that failed so far, the probes sent. The two directions are searched at once, so
/// the status line holds both; each direction's last state stays as a line at the end.
pub struct Live {
    bar: indicatif::ProgressBar,
    /// Forward, then reverse: None until its first probe.
    ways: [Option<Way>; 2],
}

/// One direction's search so far.
struct Way {
    last: String,
    passed: u32,
    failed: Option<u32>,
    probes: u32,
}

impl Way {
    fn new() -> Way {
        Way {
            last: String::new(),
            passed: 0,
            failed: None,
            probes: 0,
        }
    }

    fn step(&mut self, s: path::Step) {
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
        self.last = format!("{} {fate}", s.size);
    }

    fn line(&self, name: &str) -> String {
        let failed = self
            .failed
            .map_or(String::new(), |f| format!(", fails {f}"));
        format!(
            "{name}: {}; passes {}{failed} ({} probes)",
            self.last, self.passed, self.probes
        )
    }
}

const NAMES: [&str; 2] = ["forward", "reverse"];

impl Live {
    pub fn new() -> Live {
        Live {
            bar: if crate::out::stderr_is_terminal() {
                indicatif::ProgressBar::new_spinner()
            } else {
                indicatif::ProgressBar::hidden()
            },
            ways: [None, None],
        }
    }

    /// Each direction's state so far, one line each.
    fn lines(&self) -> Vec<String> {
        self.ways
            .iter()
            .zip(NAMES)
            .filter_map(|(w, name)| w.as_ref().map(|w| w.line(name)))
            .collect()
    }

    /// Leaves each direction's last state as a line, and clears the spinner.
    pub fn finish(&self) {
        for line in self.lines() {
            self.bar.println(format!("  {line}"));
        }
        self.bar.finish_and_clear();
    }

    pub fn step(&mut self, s: path::Step) {
        let i = match s.direction {
            path::Direction::Forward => 0,
            path::Direction::Reverse => 1,
        };
        if let Some(way) = self.ways.get_mut(i) {
            way.get_or_insert_with(Way::new).step(s);
        }
        self.bar.set_message(self.lines().join("; "));
        self.bar.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(direction: path::Direction, size: u32, outcome: path::Outcome) -> path::Step {
        path::Step {
            direction,
            size,
            outcome,
        }
    }

    /// Steps of the two directions, interleaved as their searches run at once, are
    /// kept apart: each line says its own direction's progress.
    #[test]
    fn interleaved_directions_each_keep_their_own_progress() {
        use path::Direction::{Forward, Reverse};
        use path::Outcome::{Lost, Passed};
        let mut live = Live::new();
        live.step(step(Forward, 576, Passed));
        live.step(step(Reverse, 576, Passed));
        live.step(step(Forward, 9000, Passed));
        live.step(step(Reverse, 9000, Lost));
        live.step(step(Reverse, 4788, Passed));
        assert_eq!(
            live.lines(),
            [
                "forward: 9000 passed; passes 9000 (2 probes)",
                "reverse: 4788 passed; passes 4788, fails 9000 (3 probes)",
            ]
        );
        live.finish();
    }
}
