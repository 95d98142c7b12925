//! Live lines of `stream --udp`: one per interval and end with `--interval`.
use mtuperf_engine::stream::udp::UdpObserver;
use mtuperf_engine::stream::End;
use mtuperf_proto::msg::udp::{UdpInterval, UdpStreamReady};
use mtuperf_report::stream::udp as ru;

pub struct Printer {
    pub live: bool,
    /// The invocation's sink: the engine calls from its own threads.
    pub out: std::sync::Arc<crate::out::Sink>,
}

impl UdpObserver for Printer {
    fn ready(&self, _r: &UdpStreamReady) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", ru::interval_header());
        }
    }
    fn interval(&self, end: End, s: &UdpInterval) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", ru::interval_line(end, s));
        }
    }
    /// A run that lost every datagram of a direction, or the agent's report, names
    /// its likely cause.
    fn explain_failure(&self) -> bool {
        true
    }
}
