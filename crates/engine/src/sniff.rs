//! Tells an mtuperf agent from something else listening on the port (an SSH or HTTP
//! server, iperf3) before the Welcome is decoded: otherwise an SSH banner reads as "a
//! frame of 1397966893 bytes" and a server waiting for its own protocol as a timeout.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mtuperf_proto::codec::MAX_AGENT_FRAME;

use crate::EngineError;

/// What the first bytes say.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Agent,
    NotAgent,
    NeedMore,
}

/// An agent's first frame starts with a 4-byte big-endian length (at most 4 MiB, so
/// its first byte is 0), a flags byte (0 or 1) and the JSON object's brace.
fn judge(b: &[u8]) -> Verdict {
    if b.first().is_some_and(|c| *c != 0) {
        return Verdict::NotAgent;
    }
    if let Some(h) = b.get(..4) {
        let len = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize;
        if !(2..=MAX_AGENT_FRAME).contains(&len) {
            return Verdict::NotAgent;
        }
    }
    match (b.get(4), b.get(5)) {
        (Some(f), _) if *f > 1 => Verdict::NotAgent,
        (_, Some(c)) if *c != b'{' => Verdict::NotAgent,
        (Some(_), Some(_)) => Verdict::Agent,
        _ => Verdict::NeedMore,
    }
}

/// The first bytes as text, control characters escaped, at most 40 characters.
fn shown(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push_str("...");
    }
    mtuperf_proto::text::escape_control(&s).into_owned()
}

/// Waits (up to `timeout`) for the agent's first bytes, without consuming them, and
/// fails with `NotAgent` when they are not the start of an mtuperf frame.
pub(crate) fn expect_agent(
    sock: &TcpStream,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<(), EngineError> {
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 64];
    let not = |detail: String| EngineError::NotAgent { addr, detail };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let _ = sock.set_read_timeout(Some(left.min(Duration::from_millis(200))));
        match sock.peek(&mut buf) {
            Ok(0) => return Err(EngineError::ClosedBeforeWelcome { addr, reset: false }),
            Ok(n) => {
                let got = buf.get(..n).unwrap_or_default();
                match judge(got) {
                    Verdict::Agent => return Ok(()),
                    Verdict::NotAgent => return Err(not(format!("it sent '{}'", shown(got)))),
                    // A partial header: wait a little for the rest.
                    Verdict::NeedMore => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(EngineError::ClosedBeforeWelcome { addr, reset: true })
            }
            // Anything else: let the real read report it.
            Err(_) => return Ok(()),
        }
    }
    let n = sock.peek(&mut buf).unwrap_or(0);
    if n > 0 {
        return Err(not(format!(
            "it sent '{}' and then nothing for {} s",
            shown(buf.get(..n).unwrap_or_default()),
            timeout.as_secs()
        )));
    }
    Err(not(format!(
        "it answered nothing within {} s of the hello; if it is an agent, it is stuck",
        timeout.as_secs()
    )))
}

#[cfg(test)]
mod tests {
    use super::{judge, shown, Verdict};

    #[test]
    fn first_bytes_tell_an_agent_from_other_servers() {
        assert_eq!(judge(b"SSH-2.0-OpenSSH_9.6"), Verdict::NotAgent);
        assert_eq!(judge(b"HTTP/1.1 400 Bad Request"), Verdict::NotAgent);
        assert_eq!(judge(&[0x09]), Verdict::NotAgent);
        assert_eq!(judge(&[0xff]), Verdict::NotAgent);
        assert_eq!(judge(b"S"), Verdict::NotAgent);
        assert_eq!(judge(&[0, 0, 0, 40, 0, b'{']), Verdict::Agent);
        assert_eq!(judge(&[0, 0, 0, 40, 1]), Verdict::NeedMore);
        assert_eq!(judge(&[0, 0, 0, 40, 0, b'<']), Verdict::NotAgent);
        assert_eq!(judge(&[0, 0, 0, 40, 7]), Verdict::NotAgent);
        assert_eq!(judge(&[0, 0]), Verdict::NeedMore);
        assert_eq!(shown(b"SSH-2.0-x\r\n"), "SSH-2.0-x\\r\\n");
    }
}
