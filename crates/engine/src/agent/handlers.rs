//! Every request the agent serves, registered in one place: a new measurement kind
//! is its folder (request, client run, agent handler) plus one line here.

use crate::serve::Handlers;
use crate::{doctor, mesh, path, rr, stream};

/// The agent's handlers, one per request message.
pub fn all() -> Handlers {
    Handlers::default()
        .with(stream::agent::StreamHandler)
        .with(stream::udp::agent::UdpStreamHandler)
        .with(rr::agent::RrHandler)
        .with(path::agent::PathHandler)
        .with(doctor::agent::DoctorHandler)
        .with(mesh::agent::DiscoverHandler)
        .with(mesh::agent::ThirdPartyHandler)
        .with(mesh::agent::CountersHandler)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use mtuperf_proto::msg::doctor::DoctorRequest;
    use mtuperf_proto::msg::mesh::{
        CountersRequest, DiscoverRequest, ThirdPartyRequest, ThirdPartyTest,
    };
    use mtuperf_proto::msg::path::{PathOpen, PathReverseProbe};
    use mtuperf_proto::msg::udp::UdpSent;
    use mtuperf_proto::msg::{ClientMsg, Hello, Role};

    use crate::config::{RrConfig, StreamConfig, UdpStreamConfig};

    /// Every request the agent serves, and whether it is a test.
    fn requests() -> Vec<(ClientMsg, bool)> {
        vec![
            (ClientMsg::Stream(StreamConfig::default().request()), true),
            (
                ClientMsg::UdpStream(UdpStreamConfig::default().request(vec![1])),
                true,
            ),
            (
                ClientMsg::Rr(RrConfig::default().wire(Vec::new(), None)),
                true,
            ),
            (
                ClientMsg::PathOpen(PathOpen {
                    client_port: 1,
                    reverse_port: None,
                }),
                true,
            ),
            (
                ClientMsg::Doctor(DoctorRequest {
                    profile: "rac".into(),
                    sample_ms: 0,
                }),
                true,
            ),
            (
                ClientMsg::ThirdParty(ThirdPartyRequest {
                    test: ThirdPartyTest::Path,
                    from: [127, 0, 0, 1].into(),
                    to: ([127, 0, 0, 1], 7878).into(),
                    mss: None,
                }),
                true,
            ),
            (ClientMsg::Discover(DiscoverRequest {}), false),
            (ClientMsg::Counters(CountersRequest::default()), false),
        ]
    }

    #[test]
    fn every_request_has_exactly_one_handler_and_the_right_kind() {
        let handlers = super::all();
        for (msg, test) in requests() {
            assert_eq!(handlers.takers(&msg), 1, "{}", msg.name());
            let route = handlers.find(&msg).unwrap();
            assert_eq!(route.is_test(), test, "{}", msg.name());
        }
    }

    #[test]
    fn the_sessions_own_messages_have_no_handler() {
        let handlers = super::all();
        for msg in [
            ClientMsg::Hello(Hello::new([0; 16], Role::Control)),
            ClientMsg::Auth { proof: "00".into() },
            ClientMsg::PathReverseProbe(PathReverseProbe {
                seq: 1,
                size: 1500,
                wait_ms: 100,
            }),
            ClientMsg::UdpSent(UdpSent { sent: vec![1] }),
            ClientMsg::Go,
            ClientMsg::Stop,
            ClientMsg::Ping,
            ClientMsg::Bye,
        ] {
            assert!(handlers.find(&msg).is_none(), "{}", msg.name());
        }
    }
}
