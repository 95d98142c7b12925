//! One fault, one answer (issue 29): on each fault of the lab, `path`, `path --hops`
//! and `mesh` name the same class and location, or the mesh a finer view of it (the
//! node where one pair sees their segment, or a one-way drop on it). The typed
//! diagnoses in their JSON are compared, never their words. Real binary, real agents,
//! real namespaces (root needed; otherwise each test prints why and passes); every
//! command runs inside node n1 of a 4-node cluster lab whose second network holds the
//! fault: the mesh reaches the agents over the first (a switch port at 1500 stalls TCP
//! to the node behind it as it stalls every large message, discovery's included).
use crate::lab_support;

use lab_support::{mtuperf, text, TestLab, BIN};
use mtuperf_lab::Lab;
use serde_json::{json, Value};

/// A 4-node, 2-network cluster lab with `fault` (on net 2) and keyed agents on
/// every node.
fn cluster(fault: &str) -> TestLab {
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "4",
        "--nets",
        "2",
        "--fault",
        fault,
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    lab
}

/// Runs `mtuperf --no-store ARGS --json` inside n1: (exit code, document).
fn json_in_n1(lab: &TestLab, args: &[&str]) -> (i32, Value) {
    let argv = [&[BIN, "--no-store"][..], args, &["--json"]].concat();
    let out = lab.exec("n1", &argv);
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out)));
    (out.status.code().unwrap_or(-1), doc)
}

/// The three commands' diagnoses of the path from n1 to n3 on net 2: `path`'s,
/// `path --hops`'s, and the mesh's fault findings (with the mesh document).
struct Seen {
    path: Vec<Value>,
    hops: Vec<Value>,
    mesh: Vec<Value>,
    mesh_doc: Value,
}

fn diagnoses(lab: &TestLab) -> Seen {
    let (code, path) = json_in_n1(lab, &["path", "198.19.2.3"]);
    assert_eq!(code, 1, "path: {path:#}");
    let (code, hops) = json_in_n1(lab, &["path", "--hops", "198.19.2.3"]);
    assert_eq!(code, 1, "hops: {hops:#}");
    assert!(
        hops["hops"]["agent"].is_object(),
        "the target's agent answered: {hops:#}"
    );
    let (code, mesh) = json_in_n1(
        lab,
        &[
            "mesh",
            "--net",
            "198.19.2.0/24",
            "n1=198.19.1.1",
            "n2=198.19.1.2",
            "n3=198.19.1.3",
            "n4=198.19.1.4",
        ],
    );
    assert_eq!(code, 1, "mesh: {mesh:#}");
    let faults = mesh["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "fault")
        .map(|f| f["diagnosis"].clone())
        .collect();
    Seen {
        path: path["agent"]["faults"].as_array().unwrap().clone(),
        hops: hops["hops"]["faults"].as_array().unwrap().clone(),
        mesh: faults,
        mesh_doc: mesh,
    }
}

/// Whether two diagnoses name one fault: the same MTU and expected MTU, and the same
/// class at the same place, or a finer view of it: the mesh names the node whose port
/// it is where one pair sees only their segment, and the node's inbound (outbound)
/// side where one pair sees a one-way drop into (out of) it on their segment.
fn agree(x: &Value, y: &Value) -> bool {
    let same = |k: &str| x[k] == y[k];
    let refines = |fine: &Value, coarse: &Value| {
        let (node, seg) = (&fine["at"], &coarse["at"]);
        if node["kind"] != "node" || seg["kind"] != "segment" {
            return false;
        }
        match (fine["class"].as_str(), coarse["class"].as_str()) {
            (Some("inbound_drop"), Some("one_way_drop")) => node["addr"] == coarse["to"],
            (Some("outbound_drop"), Some("one_way_drop")) => node["addr"] == coarse["from"],
            (f, c) => f == c && (node["addr"] == seg["a"] || node["addr"] == seg["b"]),
        }
    };
    same("mtu")
        && same("expect")
        && ((same("class") && x["at"] == y["at"]) || refines(x, y) || refines(y, x))
}

/// Every command names exactly one fault, `want` (class and location), and they agree.
fn assert_one_answer(s: &Seen, want: &Value) {
    let ctx = format!(
        "path {:#}\nhops {:#}\nmesh {:#}",
        json!(s.path),
        json!(s.hops),
        s.mesh_doc
    );
    assert_eq!(s.path.len(), 1, "{ctx}");
    assert_eq!(s.hops.len(), 1, "{ctx}");
    assert_eq!(s.mesh.len(), 1, "one finding, not one per pair: {ctx}");
    let (p, h, m) = (&s.path[0], &s.hops[0], &s.mesh[0]);
    assert_eq!(p, h, "path and path --hops: {ctx}");
    assert!(agree(p, m), "path and mesh: {ctx}");
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&m[k], v, "mesh's {k}: {ctx}");
    }
    assert_eq!(
        s.mesh_doc["answer"],
        json!({"answer": "not_ready", "finding": 0, "others": 0}),
        "{ctx}"
    );
}

fn node(addr: &str) -> Value {
    json!({"kind": "node", "addr": addr})
}

/// Issue 29's first node: its NIC at 1500. `path` said "mismatch on the same
/// segment"; now all three name n3's NIC and raise it to 9000.
#[test]
fn a_nic_at_1500_is_that_nic_everywhere() {
    require_lab!(false);
    let lab = cluster("nic-mtu=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "nic_mtu", "iface": "net2", "nic_mtu": 1500,
            "at": node("198.19.2.3"), "mtu": 1500, "expect": 9000}),
    );
}

/// A switch port at 1500 in front of n3: one pair sees its segment, the mesh names
/// n3's port.
#[test]
fn a_switch_port_at_1500_is_that_port_everywhere() {
    require_lab!(false);
    let lab = cluster("port-mtu=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "switch_port", "nic_mtu": 9000,
            "at": node("198.19.2.3"), "mtu": 1500}),
    );
    assert_eq!(
        s.path[0]["at"],
        json!({"kind": "segment", "a": "198.19.2.1", "b": "198.19.2.3"})
    );
}

/// Issue 29's black hole: n3 behind a router (proxy ARP, one subnet) whose link to
/// n3 is 1500 and which drops its frag-needed. Mesh said "NIC at 1500, ip link set
/// mtu 9000", path said "mismatch", hops said "black hole after hop 1"; all three now
/// name the black hole past that router.
#[test]
fn a_black_hole_is_that_router_everywhere() {
    require_lab!(false);
    let lab = cluster("blackhole=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "black_hole", "hop": 1,
            "at": {"kind": "router", "addr": "198.19.2.103"}, "mtu": 1500, "expect": 9000}),
    );
    let f = &s.mesh_doc["findings"][0];
    assert_eq!(f["node"], 2, "the router in front of n3: {f}");
}

/// The one-way drop `path` and `path --hops` from n1 see on the segment of n1 and
/// n3: from `from` to `to`, both NICs at 9000.
fn one_way(from: &str, to: &str) -> Value {
    json!({"class": "one_way_drop", "from": from, "to": to, "nic_mtu": 9000,
        "at": {"kind": "segment", "a": "198.19.2.1", "b": "198.19.2.3"},
        "mtu": 1500, "expect": 9000})
}

/// The nft rule of a fault dropped the larger probes (and nothing else drove this).
fn assert_dropped(lab: &TestLab, host: &str, family: &str, table: &str) {
    let rules = lab.exec(host, &["nft", "list", "table", family, table]);
    let rules = String::from_utf8_lossy(&rules.stdout).to_string();
    assert!(rules.contains("counter packets "), "{rules}");
    assert!(!rules.contains("counter packets 0 "), "{rules}");
}

/// Issue 29's second node: it drops inbound frames above 1500 while its NIC says
/// 9000. Mesh printed one "asymmetric" finding per peer and `path --hops` blamed this
/// host's first link. Now `path` and `path --hops` name the one-way drop from n1 into
/// n3 on their segment (n1's outbound side or n3's inbound side: one pair cannot tell),
/// and the mesh, seeing every path into n3 fail and every path out carry, refines it to
/// n3's inbound side, once.
#[test]
fn an_inbound_drop_is_that_direction_and_the_mesh_names_the_node() {
    require_lab!(false);
    let lab = cluster("inbound=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "inbound_drop", "nic_mtu": 9000,
            "at": node("198.19.2.3"), "mtu": 1500, "expect": 9000}),
    );
    assert_eq!(
        s.path[0],
        one_way("198.19.2.1", "198.19.2.3"),
        "{:#}",
        s.path[0]
    );
    let f = &s.mesh_doc["findings"][0];
    assert_eq!(f["node"], 2, "{f}");
    assert_eq!(f["directions"].as_array().unwrap().len(), 3, "{f}");
    assert!(Lab::load(&lab.name).unwrap().unwrap().netns("n3").is_some());
    assert_dropped(&lab, "n3", "inet", "mtlab_fault_inbound");
}

/// The mirror image, which the pair rule used to pin on the near end: n3's switch port
/// drops frames above 1500 coming out of n3. From the healthy n1, `path` and `path
/// --hops` name the one-way drop from n3 to n1 on their segment (n3's outbound side or
/// n1's inbound side), never "this host"; the mesh, seeing every path out of n3 fail
/// and every path into it carry, names n3's outbound side, once.
#[test]
fn an_outbound_drop_is_that_direction_and_the_mesh_names_the_node() {
    require_lab!(false);
    let lab = cluster("outbound=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "outbound_drop", "nic_mtu": 9000,
            "at": node("198.19.2.3"), "mtu": 1500, "expect": 9000}),
    );
    assert_eq!(
        s.path[0],
        one_way("198.19.2.3", "198.19.2.1"),
        "{:#}",
        s.path[0]
    );
    let f = &s.mesh_doc["findings"][0];
    assert_eq!(f["node"], 2, "{f}");
    let dirs = f["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 3, "{f}");
    assert!(dirs.iter().all(|d| d["from"] == 2), "{f}");
    assert_dropped(&lab, "sw2", "netdev", "mtlab_fault_outbound");
}

/// A router answering frag-needed in front of n3: all three name that router.
#[test]
fn a_router_answering_frag_needed_is_that_router_everywhere() {
    require_lab!(false);
    let lab = cluster("routed=n3:2:1500");
    let s = diagnoses(&lab);
    assert_one_answer(
        &s,
        &json!({"class": "router_mtu",
            "at": {"kind": "router", "addr": "198.19.2.103"}, "mtu": 1500, "expect": 9000}),
    );
}

/// Runs `mtuperf --no-store ARGS --json` inside `host`: (exit code, document).
fn json_in(lab: &TestLab, host: &str, args: &[&str]) -> (i32, Value) {
    let argv = [&[BIN, "--no-store"][..], args, &["--json"]].concat();
    let out = lab.exec(host, &argv);
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out)));
    (out.status.code().unwrap_or(-1), doc)
}

/// Stops the client's agent (a child this test started) however the test ends.
struct Agent(std::process::Child);
impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The single-pair scenarios, from the client: `path` and `path --hops` name the same
/// faults on every one. On mismatch, whose two ends share a subnet, a two-node mesh
/// of the client and the server names the same fault at the same place. (The routed
/// scenarios put the ends on two subnets, which a mesh does not pair; across the
/// switchport scenario's port TCP stalls on the agents' larger messages, so a mesh
/// cannot reach the server over it: the cluster tests above reach it over another
/// network.)
#[test]
fn single_pair_scenarios_agree_in_path_hops_and_a_two_node_mesh() {
    require_lab!(false);
    let lab = TestLab::up(&[]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let targets = [
        ("std", "198.18.1.2", "[]"),
        ("jumbo", "198.18.2.2", "[]"),
        ("routed", "198.18.13.2", "router_mtu"),
        ("blackhole", "198.18.14.2", "black_hole"),
        ("mismatch", "198.18.5.2", "nic_mtu"),
        ("switchport", "198.18.6.2", "switch_port"),
        ("asym", "198.18.17.2", "router_mtu"),
    ];
    for (name, t, class) in targets {
        let (_, p) = json_in(&lab, "client", &["path", t]);
        let (_, h) = json_in(&lab, "client", &["path", "--hops", t]);
        let (pf, hf) = (&p["agent"]["faults"], &h["hops"]["faults"]);
        assert_eq!(pf, hf, "{name}: path {p:#}\nhops {h:#}");
        let got = pf[0]["class"].as_str().map_or("[]".into(), String::from);
        assert_eq!(got, class, "{name}: {p:#}");
    }
    // An agent on the client too, on its mismatch address (it exits by itself after 3
    // minutes if the test could not stop it).
    let agent = Agent(
        lab.exec_cmd(
            "client",
            &[BIN, "serve", "--bind", "198.18.5.1", "--lifetime", "3m"],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the client's agent"),
    );
    let listening = (0..50).any(|_| {
        let up = json_in(&lab, "client", &["path", "198.18.5.1"]).0 != 2;
        if !up {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        up
    });
    assert!(listening, "the client's agent never answered");
    let (code, mesh) = json_in(
        &lab,
        "client",
        &[
            "mesh",
            "--net",
            "198.18.5.0/24",
            "c=198.18.5.1",
            "s=198.18.5.2",
        ],
    );
    assert_eq!(code, 1, "{mesh:#}");
    let (_, p) = json_in(&lab, "client", &["path", "198.18.5.2"]);
    let findings = mesh["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{mesh:#}");
    assert_eq!(
        findings[0]["diagnosis"], p["agent"]["faults"][0],
        "mesh {mesh:#}\npath {p:#}"
    );
    drop(agent);
}
