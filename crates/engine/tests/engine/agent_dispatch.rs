//! The agent's session dispatches each request through its registered handler, and
//! refuses by name a message no handler takes, the session living on.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::test_agent;
use mtuperf_engine::agent::LogLine;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::{EngineError, Shutdown};
use mtuperf_proto::msg::doctor::DoctorRequest;
use mtuperf_proto::msg::mesh::CountersRequest;
use mtuperf_proto::msg::path::PathReverseProbe;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, Refusal};

fn agent(log: Arc<std::sync::Mutex<Vec<LogLine>>>) -> (SocketAddr, Shutdown) {
    let mut config = test_agent::config();
    config.log = Arc::new(move |l: &LogLine| log.lock().unwrap().push(l.clone()));
    let (addr, stop) = test_agent::start(config);
    (addr, stop)
}

fn session(addr: SocketAddr) -> Session {
    Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap()
}

#[test]
fn a_registered_handler_is_reached_for_its_request() {
    let log = Arc::default();
    let (addr, stop) = agent(Arc::clone(&log));
    let s = session(addr);
    // doctor: a test, served by doctor's handler (its reply, its log line).
    let msg = ClientMsg::Doctor(DoctorRequest {
        profile: "generic".into(),
        sample_ms: 0,
    });
    let reply = s.request(&msg, "doctor reply").unwrap();
    assert!(matches!(reply, AgentMsg::DoctorReply(_)), "{reply:?}");
    // counters: a query, served by mesh's handler.
    let reply = s
        .request(&ClientMsg::Counters(CountersRequest::default()), "counters")
        .unwrap();
    assert!(matches!(reply, AgentMsg::Counters(_)), "{reply:?}");
    // The handler's own refusal comes back as its refusal, not the session's.
    let msg = ClientMsg::Doctor(DoctorRequest {
        profile: "nonsense".into(),
        sample_ms: 0,
    });
    match s.request(&msg, "doctor reply") {
        Err(EngineError::Refused(Refusal::BadRequest { detail })) => {
            assert!(detail.contains("unknown doctor profile"), "{detail}");
        }
        other => panic!("expected doctor's refusal, got {other:?}"),
    }
    s.close();
    stop.trigger();
    let events: Vec<&str> = log.lock().unwrap().iter().map(|l| l.event).collect();
    assert!(events.contains(&"doctor"), "{events:?}");
}

#[test]
fn a_message_no_handler_takes_is_refused_by_name_and_the_session_goes_on() {
    let (addr, stop) = agent(Arc::default());
    let s = session(addr);
    for (msg, name) in [
        (ClientMsg::Go, "go"),
        (
            ClientMsg::PathReverseProbe(PathReverseProbe {
                seq: 1,
                size: 1500,
                wait_ms: 0,
            }),
            "path_reverse_probe",
        ),
        (ClientMsg::Auth { proof: "00".into() }, "auth"),
    ] {
        match s.request(&msg, "refusal") {
            Err(EngineError::Refused(Refusal::BadRequest { detail })) => {
                assert_eq!(detail, format!("unexpected message {name}"));
            }
            other => panic!("expected a refusal of {name}, got {other:?}"),
        }
    }
    // The session is still served: a Ping is answered.
    let reply = s.request(&ClientMsg::Ping, "ack").unwrap();
    assert_eq!(reply, AgentMsg::Ack);
    s.close();
    stop.trigger();
}
