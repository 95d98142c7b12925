//! The client side of a session: connect, handshake (version, mutual authentication),
//! and open data connections tied to the session by its cookie.

pub mod phase;

use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use mtuperf_proto::auth::{self, Key};
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Hello, Refusal, Role, Welcome};
use mtuperf_proto::{DEFAULT_PORT, PROTOCOL_VERSION};
use socket2::{Domain, Protocol, Socket, Type};

use crate::control::Control;
use crate::error::AuthFailure;
use crate::flow::{AuthOk, Expected};
use crate::stamp::random_bytes;
use crate::EngineError;

/// How to reach the agent.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Local address to bind (chooses the interface, like perl-sockets' --local-host).
    pub bind: Option<IpAddr>,
    pub key: Option<Key>,
    pub connect_timeout: Duration,
    /// Bound on waiting for any single answer of the agent outside a running test.
    pub reply_timeout: Duration,
    /// TCP_MAXSEG of the control connection, set before connect (None: the route's).
    pub mss: Option<u32>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            bind: None,
            key: None,
            connect_timeout: Duration::from_secs(5),
            reply_timeout: Duration::from_secs(10),
            mss: None,
        }
    }
}

/// Resolves "host", "host:port", "[v6]:port" or a bare IPv6 address.
pub fn resolve(target: &str) -> Result<SocketAddr, EngineError> {
    let err = |source| EngineError::Resolve {
        target: target.to_string(),
        source,
    };
    if let Ok(ip) = target.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    if let Ok(sa) = target.parse::<SocketAddr>() {
        return Ok(sa);
    }
    let with_port = if target.contains(':') {
        target.to_string()
    } else {
        format!("{target}:{DEFAULT_PORT}")
    };
    with_port
        .to_socket_addrs()
        .map_err(err)?
        .next()
        .ok_or_else(|| err(std::io::Error::other("no address found")))
}

/// Creates a TCP socket, optionally bound to `bind`, lets `setup` set options that
/// must precede connect (buffers, MSS), and connects within `timeout`.
pub fn connect_tcp(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    timeout: Duration,
    setup: impl FnOnce(&Socket),
) -> Result<TcpStream, EngineError> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| EngineError::io("creating socket", e))?;
    if let Some(ip) = bind {
        let local = SocketAddr::new(ip, 0);
        sock.bind(&local.into())
            .map_err(|source| EngineError::Bind {
                addr: local,
                source,
            })?;
    }
    setup(&sock);
    sock.connect_timeout(&addr.into(), timeout)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                EngineError::ConnectTimeout {
                    addr,
                    secs: timeout.as_secs(),
                }
            }
            _ => EngineError::Connect { addr, source },
        })?;
    Ok(sock.into())
}

/// An open, handshaken control session with an agent.
#[derive(Debug)]
pub struct Session {
    pub control: Control,
    /// What the agent told about itself once this client was admitted.
    pub info: AgentInfo,
    pub agent: SocketAddr,
    cookie: String,
    key: Option<Key>,
    opts: ConnectOptions,
}

impl Session {
    pub fn connect(target: &str, opts: &ConnectOptions) -> Result<Session, EngineError> {
        let agent = resolve(target)?;
        let sock = connect_tcp(agent, opts.bind, opts.connect_timeout, |s| {
            if let Some(mss) = opts.mss {
                // Best effort: without it the session works as before.
                let _ = mtuperf_sys::sockopt::set_tcp_maxseg(s, mss);
            }
        })?;
        let control = Control::new(sock, Codec::client())?;
        let nc: auth::Nonce = random_bytes();
        control.send(&ClientMsg::Hello(Hello::new(nc, Role::Control)))?;
        crate::sniff::expect_agent(control.socket(), agent, opts.reply_timeout)?;
        let welcome: Welcome = control
            .expect(Some(opts.reply_timeout), "the agent's welcome")
            .map_err(|e| match e {
                EngineError::Timeout { secs, .. } => EngineError::NoWelcome { secs },
                e => e,
            })?;
        if welcome.version != PROTOCOL_VERSION {
            return Err(EngineError::Refused(Refusal::VersionMismatch {
                agent: welcome.version,
                client: PROTOCOL_VERSION,
            }));
        }
        let na = decode_nonce(&welcome.nonce)?;
        let (cookie, info, session_key) = match (welcome.agent_proof, &opts.key) {
            (None, None) => match (welcome.cookie, welcome.info) {
                (Some(cookie), Some(info)) => (cookie, info, None),
                _ => {
                    return Err(EngineError::Protocol(
                        "an open agent's welcome without cookie or details".into(),
                    ))
                }
            },
            (Some(_), None) => return Err(EngineError::Refused(Refusal::AuthRequired)),
            (None, Some(_)) => return Err(EngineError::Auth(AuthFailure::AgentOpen)),
            (Some(proof), Some(key)) => {
                let proof = hex::decode(&proof).unwrap_or_default();
                if !auth::verify_agent_proof(key, &nc, &na, &proof) {
                    return Err(EngineError::Auth(AuthFailure::AgentProof));
                }
                let p = auth::client_proof(key, &nc, &na);
                control.send(&ClientMsg::Auth {
                    proof: hex::encode(p),
                })?;
                let session = auth::session_key(key, &nc, &na);
                control.authenticate(session.clone());
                let ok: AuthOk = control.expect(Some(opts.reply_timeout), "authentication")?;
                (ok.cookie, ok.info, Some(session))
            }
        };
        Ok(Session {
            control,
            info,
            agent,
            cookie,
            key: session_key,
            opts: opts.clone(),
        })
    }

    /// A new session with the same agent and options (this one may be stuck, e.g.
    /// behind a report that a path too small for it never delivers), waiting at most
    /// `within` to connect and for each reply.
    pub fn reconnect(&self, within: Duration) -> Result<Session, EngineError> {
        let opts = ConnectOptions {
            connect_timeout: self.opts.connect_timeout.min(within),
            reply_timeout: self.opts.reply_timeout.min(within),
            ..self.opts.clone()
        };
        Session::connect(&self.agent.to_string(), &opts)
    }

    pub fn reply_timeout(&self) -> Duration {
        self.opts.reply_timeout
    }

    pub fn bind(&self) -> Option<IpAddr> {
        self.opts
            .bind
            .or_else(|| self.control.local().map(|a| a.ip()))
    }

    /// Opens data connection `index` of the accepted test; `setup` runs before connect.
    pub fn open_data(
        &self,
        index: u32,
        setup: impl FnOnce(&Socket),
    ) -> Result<TcpStream, EngineError> {
        let stream = connect_tcp(self.agent, self.bind(), self.opts.connect_timeout, setup)?;
        // A fresh nonce per connection, covered by the tag: the agent takes it once.
        let nonce: auth::Nonce = random_bytes();
        let tag = self
            .key
            .as_ref()
            .map(|k| hex::encode(auth::data_tag(k, self.cookie.as_bytes(), index, &nonce)));
        let hello = ClientMsg::Hello(Hello::new(
            nonce,
            Role::Data {
                cookie: self.cookie.clone(),
                index,
                tag,
            },
        ));
        let frame = Codec::client().encode(&hello);
        std::io::Write::write_all(&mut &stream, &frame)
            .map_err(|e| EngineError::io("opening data connection", e))?;
        Ok(stream)
    }

    /// Sends a request and waits for the answer `T`; a refusal is an error.
    pub fn ask<T: Expected<Msg = AgentMsg>>(
        &self,
        msg: &ClientMsg,
        what: &str,
    ) -> Result<T, EngineError> {
        self.control.send(msg)?;
        self.control.expect(Some(self.opts.reply_timeout), what)
    }

    /// Sends a request and waits for one answer, turning refusals into errors.
    pub fn request(&self, msg: &ClientMsg, what: &str) -> Result<AgentMsg, EngineError> {
        self.control.send(msg)?;
        let m = self
            .control
            .recv::<AgentMsg>(Some(self.opts.reply_timeout), what)?;
        crate::flow::Incoming::failure(m)
    }

    pub fn close(self) {
        let _ = self.control.send(&ClientMsg::Bye);
        self.control.shutdown();
    }
}

fn decode_nonce(h: &str) -> Result<auth::Nonce, EngineError> {
    let mut n = [0u8; 16];
    hex::decode_to_slice(h, &mut n).map_err(|_| EngineError::Protocol("malformed nonce".into()))?;
    Ok(n)
}
