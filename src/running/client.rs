//! Talking to a running daemon from short-lived processes: plain HTTP/1.1 over loopback (no
//! async runtime, so `cairn hook` stays cheap), and the byte relay that lets `cairn serve`
//! speak stdio MCP through the daemon's socket.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::{Context as _, bail};

/// GETs `path` from the daemon on `port` with the bearer `token`; the body on 200.
pub fn get(port: u16, token: &str, path: &str, timeout: Duration) -> anyhow::Result<String> {
    request("GET", port, token, path, timeout)
}

/// POSTs an empty body to `path` (an action the daemon takes); the answer's body on 200.
pub fn post(port: u16, token: &str, path: &str, timeout: Duration) -> anyhow::Result<String> {
    request("POST", port, token, path, timeout)
}

fn request(
    method: &str,
    port: u16,
    token: &str,
    path: &str,
    timeout: Duration,
) -> anyhow::Result<String> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, timeout)
        .with_context(|| format!("cannot reach the daemon on {address}"))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the daemon sent no HTTP response")?;
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let body = &response[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("the daemon sent no HTTP status")?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        unchunk(body)?
    } else {
        body.to_vec()
    };
    let body = String::from_utf8_lossy(&body).into_owned();
    if status != 200 {
        bail!("the daemon answered {status}: {}", body.trim());
    }
    Ok(body)
}

fn unchunk(mut body: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a malformed chunked body")?;
        let size = std::str::from_utf8(&body[..line_end])?
            .split(';')
            .next()
            .unwrap_or("");
        let size = usize::from_str_radix(size.trim(), 16).context("a malformed chunk size")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size {
            bail!("a truncated chunked body");
        }
        out.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or_default();
    }
}

/// Relays stdin to the daemon's socket and its answers to stdout until either side ends.
#[cfg(unix)]
pub async fn relay(stream: tokio::net::UnixStream) -> std::io::Result<()> {
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    let upstream = async move {
        let mut stdin = tokio::io::stdin();
        let copied = tokio::io::copy(&mut stdin, &mut to_daemon).await;
        use tokio::io::AsyncWriteExt as _;
        let _ = to_daemon.shutdown().await;
        copied
    };
    let downstream = async move {
        let mut stdout = tokio::io::stdout();
        let copied = tokio::io::copy(&mut from_daemon, &mut stdout).await;
        use tokio::io::AsyncWriteExt as _;
        let _ = stdout.flush().await;
        copied
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        // The client left: give the daemon the end of input and pass on its last answers.
        sent = &mut upstream => {
            sent?;
            downstream.await?;
        }
        // The daemon went away: nothing more can be answered.
        received = &mut downstream => {
            received?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined() {
        let body = b"5\r\nhello\r\n7;x=1\r\n, world\r\n0\r\n\r\n";
        assert_eq!(unchunk(body).unwrap(), b"hello, world");
        assert!(unchunk(b"5\r\nhel").is_err());
        assert!(unchunk(b"zz\r\n").is_err());
    }

    #[test]
    fn a_closed_port_is_a_clear_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let error = get(port, "t", "/health", Duration::from_millis(500)).unwrap_err();
        assert!(format!("{error:#}").contains("cannot reach the daemon"));
    }
}
