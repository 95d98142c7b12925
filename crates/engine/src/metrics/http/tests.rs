//! The metrics listener against hostile clients, in-process on loopback: slowloris,
//! an oversized request line, a pipelining client that never reads, a full share and
//! a full agent. Short bounds keep the tests quick; the logic is the one served.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::conn::End;
use super::{Bounds, Server};
use crate::agent::conns::Conns;
use crate::Shutdown;

const QUICK: Bounds = Bounds {
    max_head: 8 * 1024,
    head_time: Duration::from_millis(1500),
    write_time: Duration::from_millis(1500),
    linger: Duration::from_millis(200),
    max_conns: 4,
};

/// Sets its flag when dropped, a panic's unwinding included, so that no thread a
/// failed test started is left waiting for it.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Triggers the server's stop when dropped, a panic's unwinding included.
struct ShutdownOnDrop<'a>(&'a Shutdown);

impl Drop for ShutdownOnDrop<'_> {
    fn drop(&mut self) {
        self.0.trigger();
    }
}

/// Runs a server with `bounds` and a body of `body_len` bytes while `f` runs with its
/// address; returns how its connections ended.
fn with_server(
    bounds: Bounds,
    cap: Arc<Conns>,
    body_len: usize,
    f: impl FnOnce(SocketAddr),
) -> Vec<End> {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let addr = l.local_addr().unwrap();
    let stop = Shutdown::new();
    thread::scope(|s| {
        let h = s.spawn(|| {
            let mut server = Server::new(l, cap, bounds);
            let source = || {
                let mut b = b"mtuperf_sessions_total 1\n".to_vec();
                b.resize(body_len.max(b.len()), b'#');
                b
            };
            server.run(&source, &stop);
            server.ended
        });
        {
            let _stop = ShutdownOnDrop(&stop);
            f(addr);
        }
        h.join().unwrap()
    })
}

/// A scrape: the status line and the body's length, within `within`.
fn scrape(addr: SocketAddr, within: Duration) -> (String, usize) {
    let t0 = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(within)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    // A refusal written at once may be followed by a reset (the request came after
    // the close): what came before it counts.
    let r = s.read_to_end(&mut out);
    assert!(
        (r.is_ok() || !out.is_empty()) && t0.elapsed() < within,
        "scrape not answered within {within:?}: {r:?} after {:?}",
        t0.elapsed()
    );
    let text = String::from_utf8_lossy(&out);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.lines().next().unwrap_or("").to_string(), body.len())
}

#[test]
fn slowloris_and_an_oversized_request_line_do_not_hold_up_scrapes() {
    let cap = Conns::new(100);
    let ended = with_server(QUICK, cap.clone(), 0, |addr| {
        // Eight connections trickling a header a byte at a time, more than the share.
        let stop = AtomicBool::new(false);
        thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let mut c = TcpStream::connect(addr).unwrap();
                    let _ = c.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: ");
                    while !stop.load(Ordering::Relaxed) {
                        if c.write_all(b"a").is_err() {
                            return;
                        }
                        thread::sleep(Duration::from_millis(100));
                    }
                });
            }
            let _stop = StopOnDrop(&stop);
            thread::sleep(Duration::from_millis(300));
            // A 16 MiB request line: answered 431 after 8 KiB, never buffered whole.
            let mut big = TcpStream::connect(addr).unwrap();
            big.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            let chunk = vec![b'A'; 64 * 1024];
            let mut written = 0usize;
            while written < 16 << 20 {
                match big.write(&chunk) {
                    Ok(n) => written += n,
                    Err(_) => break,
                }
            }
            assert!(written < 16 << 20, "16 MiB taken: the line was not cut off");
            let mut answer = String::new();
            let _ = big.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 431"), "{answer:?}");
            // Scrapes keep being answered at once, the flood going on.
            for _ in 0..10 {
                let (status, len) = scrape(addr, Duration::from_secs(1));
                assert_eq!(status, "HTTP/1.1 200 OK");
                assert!(len > 0);
                thread::sleep(Duration::from_millis(50));
            }
        });
        // Every connection is gone: their shares of the agent's cap are back.
        thread::sleep(Duration::from_millis(400));
        assert_eq!(cap.live(), 0, "shares not given back");
    });
    assert!(ended.contains(&End::Answered), "{ended:?}");
}

#[test]
fn a_connection_that_never_sends_its_head_is_closed_at_the_deadline() {
    let ended = with_server(QUICK, Conns::new(100), 0, |addr| {
        let mut idle = TcpStream::connect(addr).unwrap();
        idle.write_all(b"GET /metr").unwrap();
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let t0 = Instant::now();
        let mut b = [0u8; 16];
        assert_eq!(
            idle.read(&mut b).unwrap_or(0),
            0,
            "closed without an answer"
        );
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(1200) && took < Duration::from_secs(3),
            "closed after {took:?}, not at the 1.5 s head deadline"
        );
    });
    assert_eq!(ended, [End::SlowHead]);
}

#[test]
fn a_pipelining_client_that_never_reads_holds_up_no_other_scrape() {
    // 4 MiB answers: far more than the non-reader's socket buffers take.
    let body = 4 << 20;
    let ended = with_server(QUICK, Conns::new(100), body, |addr| {
        let hog = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        hog.set_recv_buffer_size(4096).unwrap();
        hog.connect(&addr.into()).unwrap();
        let mut hog: TcpStream = hog.into();
        let req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(200);
        hog.write_all(&req).unwrap();
        let t0 = Instant::now();
        for _ in 0..5 {
            let (status, len) = scrape(addr, Duration::from_secs(2));
            assert_eq!((status.as_str(), len), ("HTTP/1.1 200 OK", body));
        }
        assert!(t0.elapsed() < Duration::from_secs(4));
        // The non-reader is dropped at the write deadline.
        thread::sleep(Duration::from_millis(1800));
        hog.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut sink = vec![0u8; 1 << 20];
        let mut total = 0;
        loop {
            match hog.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        assert!(
            total < body,
            "the non-reader got its whole answer ({total} bytes)"
        );
    });
    assert!(ended.contains(&End::SlowReader), "{ended:?}");
}

#[test]
fn a_full_share_makes_room_and_a_full_agent_answers_503() {
    let cap = Conns::new(3);
    let bounds = Bounds {
        max_conns: 2,
        ..QUICK
    };
    with_server(bounds, cap.clone(), 0, |addr| {
        // Two silent connections fill the share; a scrape closes the older one.
        let mut first = TcpStream::connect(addr).unwrap();
        thread::sleep(Duration::from_millis(100));
        let _second = TcpStream::connect(addr).unwrap();
        thread::sleep(Duration::from_millis(100));
        assert_eq!(scrape(addr, Duration::from_secs(1)).0, "HTTP/1.1 200 OK");
        first
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let mut b = [0u8; 16];
        assert_eq!(
            first.read(&mut b).unwrap_or(0),
            0,
            "the oldest was not closed"
        );
        // The agent's cap (3) held by others: a scrape is told why, at once. (The
        // last scrape's connection first ends its linger.)
        thread::sleep(Duration::from_millis(300));
        let held: Vec<_> = std::iter::from_fn(|| cap.enter()).collect();
        let (status, _) = scrape(addr, Duration::from_secs(1));
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
        drop(held);
        assert_eq!(scrape(addr, Duration::from_secs(1)).0, "HTTP/1.1 200 OK");
    });
}

#[test]
fn other_paths_and_methods_are_refused_by_status() {
    with_server(QUICK, Conns::new(100), 0, |addr| {
        for (req, want) in [
            ("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"),
            (
                "POST /metrics HTTP/1.1\r\n\r\n",
                "HTTP/1.1 405 Method Not Allowed",
            ),
            ("HELLO\r\n\r\n", "HTTP/1.1 400 Bad Request"),
        ] {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            assert!(out.starts_with(want), "{req:?}: {out:?}");
        }
        // HEAD: the headers, no body.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"HEAD /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200 OK") && out.ends_with("\r\n\r\n"),
            "{out:?}"
        );
    });
}

#[test]
fn every_scrape_gets_a_fresh_encoding_until_a_flood_shares_them() {
    let made = std::cell::Cell::new(0u32);
    let source = || {
        made.set(made.get() + 1);
        made.get().to_string().into_bytes()
    };
    let mut e = super::Encodings::default();
    let t0 = Instant::now();
    let bodies: Vec<Arc<[u8]>> = (0..25).map(|_| e.body(&source, t0)).collect();
    assert_eq!(&*bodies[19], b"20", "the first 20 of a second are fresh");
    assert_eq!(&*bodies[24], b"20", "then shared");
    assert_eq!(&*e.body(&source, t0 + Duration::from_secs(1)), b"21");
}
