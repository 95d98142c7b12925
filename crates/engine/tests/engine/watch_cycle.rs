//! Watch cycles on loopback (issue 28): peers are checked side by side and each cycle
//! ends by its deadline, so two silent peers among four cost only their own checks
//! (before, one after another, a 10 s cycle took 20–25 s). The silent peers are
//! listening sockets that never answer: the kernel completes the connection, no
//! welcome ever comes, as with a stopped agent.

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::test_agent;
use mtuperf_engine::agent::AgentConfig;
use mtuperf_engine::metrics::WatchMetrics;
use mtuperf_engine::watch::{
    self, cycle_deadline, CpuPressure, Event, PressureKind, PressureSource, WatchConfig,
};
use mtuperf_engine::Shutdown;
use mtuperf_proto::auth::Key;

const KEY: Key = Key([7u8; 32]);

fn agent() -> (SocketAddr, Shutdown) {
    let mut config = test_agent::config();
    config.key = Some(KEY);
    let (addr, stop) = test_agent::start(config);
    (addr, stop)
}

#[test]
fn silent_peers_cost_only_their_own_checks_and_the_cycle_ends_by_its_deadline() {
    let (good1, stop1) = agent();
    let (good2, stop2) = agent();
    // Accepted by the kernel, never answered.
    let silent: Vec<TcpListener> = (0..2)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let silent_addrs: Vec<String> = silent
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let cfg = WatchConfig {
        peers: vec![
            silent_addrs[0].clone(),
            good1.to_string(),
            silent_addrs[1].clone(),
            good2.to_string(),
        ],
        every: Duration::from_secs(3),
        expect: None,
        rr: None,
        rr_rate: None,
        fan_out: 4,
        max_slowdown: 1,
    };
    let deadline = cycle_deadline(&cfg);
    let mut watcher = AgentConfig::new(Vec::new());
    watcher.key = Some(KEY);
    let events: Arc<Mutex<Vec<(Instant, Event)>>> = Arc::default();
    let shutdown = Shutdown::new();
    let (e, s) = (events.clone(), shutdown.clone());
    let t = thread::spawn(move || {
        watch::run(&cfg, &watcher, &s, &mut |ev| {
            e.lock().unwrap().push((Instant::now(), ev));
        });
    });
    let t0 = Instant::now();
    let cycle = loop {
        let found = events.lock().unwrap().iter().find_map(|(at, ev)| match ev {
            Event::Cycle(c) => Some((*at, c.clone())),
            Event::Check(_) => None,
        });
        if let Some(c) = found {
            break c;
        }
        assert!(
            t0.elapsed() < deadline * 3,
            "no cycle ended within {:?}",
            deadline * 3
        );
        thread::sleep(Duration::from_millis(50));
    };
    shutdown.trigger();
    t.join().unwrap();
    stop1.trigger();
    stop2.trigger();
    let (cycle_end, cycle) = cycle;
    // The cycle ended by its deadline (a little scheduling slack), not after the
    // silent peers' timeouts one after another.
    assert!(
        cycle.duration <= deadline + Duration::from_millis(500),
        "{cycle:?}, deadline {deadline:?}"
    );
    let events = events.lock().unwrap();
    let checks: Vec<(Instant, &watch::Check)> = events
        .iter()
        .filter(|(at, _)| *at <= cycle_end)
        .filter_map(|(at, ev)| match ev {
            Event::Check(c) => Some((*at, c.as_ref())),
            Event::Cycle(_) => None,
        })
        .collect();
    assert_eq!(checks.len(), 4, "one check per peer");
    for (at, c) in &checks {
        let good = c.peer == good1.to_string() || c.peer == good2.to_string();
        if good {
            assert!(c.path.as_ref().is_ok_and(|p| p.ok), "{c:?}");
        } else {
            assert!(c.path.is_err(), "{c:?}");
        }
        // The good peers were not held up by the silent ones: their results came in
        // before any silent peer's.
        if good {
            assert!(
                checks
                    .iter()
                    .filter(|(_, x)| x.path.is_err())
                    .all(|(t, _)| t >= at),
                "a good peer's check waited for a silent one"
            );
        }
    }
    // The cycle's figures as metrics.
    let m = WatchMetrics::default();
    m.observe_cycle(&cycle);
    for (_, c) in &checks {
        m.observe(c);
    }
    let reg = prometheus::Registry::new();
    m.register(&reg);
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&reg.gather())
        .unwrap();
    assert!(
        text.contains("mtuperf_watch_cycle_duration_seconds "),
        "{text}"
    );
    let successes = text
        .lines()
        .filter(|l| l.starts_with("mtuperf_watch_last_success_timestamp_seconds{"))
        .count();
    assert_eq!(successes, 2, "only the peers that answered: {text}");
    drop(silent);
}

#[test]
fn with_fewer_fan_out_slots_than_peers_at_most_that_many_checks_run_at_once() {
    let agents: Vec<(SocketAddr, Shutdown)> = (0..5).map(|_| agent()).collect();
    let cfg = WatchConfig {
        peers: agents.iter().map(|(a, _)| a.to_string()).collect(),
        every: Duration::from_secs(10),
        expect: None,
        rr: None,
        rr_rate: None,
        fan_out: 2,
        max_slowdown: 1,
    };
    let deadline = cycle_deadline(&cfg);
    let mut watcher = AgentConfig::new(Vec::new());
    watcher.key = Some(KEY);
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let shutdown = Shutdown::new();
    let (e, s) = (events.clone(), shutdown.clone());
    let t = thread::spawn(move || {
        watch::run(&cfg, &watcher, &s, &mut |ev| e.lock().unwrap().push(ev));
    });
    let t0 = Instant::now();
    let cycle = loop {
        let found = events.lock().unwrap().iter().find_map(|ev| match ev {
            Event::Cycle(c) => Some(c.clone()),
            Event::Check(_) => None,
        });
        if let Some(c) = found {
            break c;
        }
        assert!(t0.elapsed() < deadline * 3, "no cycle ended");
        thread::sleep(Duration::from_millis(50));
    };
    shutdown.trigger();
    t.join().unwrap();
    for (_, stop) in &agents {
        stop.trigger();
    }
    assert!(cycle.late.is_empty(), "{cycle:?}");
    let events = events.lock().unwrap();
    let checks: Vec<&watch::Check> = events
        .iter()
        .filter_map(|ev| match ev {
            Event::Check(c) => Some(c.as_ref()),
            Event::Cycle(_) => None,
        })
        .take(5)
        .collect();
    // Every peer checked in the cycle, though only two slots were there.
    assert_eq!(checks.len(), 5, "{checks:?}");
    for c in &checks {
        assert!(c.path.as_ref().is_ok_and(|p| p.ok), "{c:?}");
    }
    // How many checks ran at the start of each: never more than the slots, and the
    // two slots were used side by side.
    let at_once = checks
        .iter()
        .map(|x| {
            checks
                .iter()
                .filter(|y| y.started_unix_ms <= x.started_unix_ms)
                .filter(|y| x.started_unix_ms < y.ended_unix_ms)
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(at_once, 2, "{checks:?}");
}

/// Pressure readings in order, then `last` for ever.
struct Scripted {
    readings: std::collections::VecDeque<f64>,
    last: f64,
}

impl PressureSource for Scripted {
    fn read(&mut self) -> Option<CpuPressure> {
        let value = self.readings.pop_front().unwrap_or(self.last);
        Some(CpuPressure {
            kind: PressureKind::Psi,
            value,
        })
    }
}

/// Issue 33: under CPU pressure the watch checks less often, up to its cap, never
/// not at all; once the pressure falls it comes back to the rate asked for. Each
/// change is logged once, and the rate is a metric.
#[test]
fn cpu_pressure_stretches_the_cycle_up_to_its_cap_and_low_pressure_restores_it() {
    let (peer, stop) = agent();
    let every = Duration::from_millis(100);
    let cfg = WatchConfig {
        peers: vec![peer.to_string()],
        every,
        expect: None,
        rr: None,
        rr_rate: None,
        fan_out: 1,
        max_slowdown: 4,
    };
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut watcher = AgentConfig::new(Vec::new());
    watcher.key = Some(KEY);
    let l = log.clone();
    watcher.log = Arc::new(move |line| {
        if line.event == "watch_rate" {
            l.lock()
                .unwrap()
                .push(format!("{} {}", line.level, line.message));
        }
    });
    // High four times (2, 4, then held at the cap of 4), then low.
    let mut pressure = Scripted {
        readings: [0.9, 0.9, 0.9, 0.9].into(),
        last: 0.0,
    };
    let events: Arc<Mutex<Vec<(Instant, Event)>>> = Arc::default();
    let shutdown = Shutdown::new();
    let (e, s) = (events.clone(), shutdown.clone());
    let t = thread::spawn(move || {
        watch::run_with(&cfg, &watcher, &s, &mut pressure, &mut |ev| {
            e.lock().unwrap().push((Instant::now(), ev));
        });
    });
    let cycles = |events: &[(Instant, Event)]| -> Vec<(Instant, watch::Cycle)> {
        events
            .iter()
            .filter_map(|(at, ev)| match ev {
                Event::Cycle(c) => Some((*at, c.clone())),
                Event::Check(_) => None,
            })
            .collect()
    };
    let t0 = Instant::now();
    while cycles(&events.lock().unwrap()).len() < 8 {
        assert!(t0.elapsed() < Duration::from_mins(1), "8 cycles not seen");
        thread::sleep(Duration::from_millis(50));
    }
    shutdown.trigger();
    t.join().unwrap();
    stop.trigger();
    let events = events.lock().unwrap();
    let cycles = cycles(&events);
    let factors: Vec<u32> = cycles.iter().map(|(_, c)| c.rate.factor).collect();
    assert_eq!(&factors[..8], [2, 4, 4, 4, 2, 1, 1, 1], "{cycles:?}");
    for (_, c) in &cycles {
        assert_eq!(c.interval, every * c.rate.factor, "{c:?}");
        assert_eq!(c.rate.pressure.map(|p| p.kind), Some(PressureKind::Psi));
    }
    // Never zero: every cycle checked the peer, stretched or not.
    let checks = events
        .iter()
        .filter(|(_, ev)| matches!(ev, Event::Check(c) if c.path.as_ref().is_ok_and(|p| p.ok)))
        .count();
    assert!(checks >= 8, "{checks} checks in {} cycles", cycles.len());
    // The stretch is real: a cycle at factor 4 is followed by the next no sooner than
    // 4 x every less the jitter.
    let gap = cycles[3].0.duration_since(cycles[2].0);
    assert!(gap >= (every * 4).mul_f64(0.9), "{gap:?}");
    // One log line per change: up to 2, up to 4, down to 2, back to 1.
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(
        log[0].starts_with("warn") && log[0].contains("rate 1/2"),
        "{log:?}"
    );
    assert!(
        log[1].starts_with("warn") && log[1].contains("rate 1/4"),
        "{log:?}"
    );
    assert!(
        log[3].starts_with("info") && log[3].contains("again, as asked"),
        "{log:?}"
    );
    // The rate and its reason as metrics, with their help.
    let m = WatchMetrics::default();
    m.observe_cycle(&cycles[2].1);
    let reg = prometheus::Registry::new();
    m.register(&reg);
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&reg.gather())
        .unwrap();
    for want in [
        "# TYPE mtuperf_watch_rate_factor gauge",
        "mtuperf_watch_rate_factor 4",
        "mtuperf_watch_cycle_interval_seconds 0.4",
        "mtuperf_watch_host_cpu_pressure_ratio{source=\"psi_some_avg10\"} 0.9",
        "# HELP mtuperf_watch_host_cpu_pressure_ratio ",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
}

/// Without a key the watch runs no check and says so once, as the agent's note (its
/// words, naming the key flag, are report's; here its Debug form), and returns at once.
#[test]
fn a_watch_without_a_key_notes_it_and_checks_nothing() {
    let cfg = WatchConfig {
        peers: vec!["127.0.0.1:1".into()],
        every: Duration::from_secs(3),
        expect: None,
        rr: None,
        rr_rate: None,
        fan_out: 1,
        max_slowdown: 1,
    };
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut watcher = AgentConfig::new(Vec::new());
    let l = log.clone();
    watcher.log = Arc::new(move |line| {
        l.lock()
            .unwrap()
            .push(format!("{} {}: {}", line.level, line.event, line.message));
    });
    let mut events = 0;
    watch::run(&cfg, &watcher, &Shutdown::new(), &mut |_| events += 1);
    assert_eq!(events, 0);
    assert_eq!(*log.lock().unwrap(), ["warn watch: WatchWithoutKey"]);
}
