//! The generator's HTTP/1.1 client: one keep-alive connection, a request encoded once per load
//! and sent in one write, the answer parsed with `httparse` into buffers the connection reuses.
//!
//! hyper's client costs per request what the generator measures (a request rebuilt, a oneshot
//! and a channel envelope to the connection's own task, a wake across tasks, the body
//! collected); the generator's requests are all alike, bodiless `GET`s without pipelining, so
//! this client does only what they need. hyper stays where it serves: the mock server and the
//! reference client.
//!
//! An answer's body is delimited by `Content-Length`, by chunked transfer coding, or (neither
//! given) by the server closing the connection. A connection is closed as soon as an answer
//! says `Connection: close` (gunicorn's sync workers send it), or is HTTP/1.0 without
//! `keep-alive`, and given up after any failure, so the next request opens a new one. Closing
//! at once matters: such a server shuts its side and then waits (gunicorn up to 2 s) for the
//! client's close before its worker takes the next connection.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Headers an answer may carry; more is a failed request.
const MAX_HEADERS: usize = 32;
/// Bytes read at a time at least.
const READ_CHUNK: usize = 16 * 1024;
/// Largest answer header accepted; a server sending more is failing.
const MAX_HEAD: usize = 64 * 1024;

/// A request's bytes, encoded once for every request of a load.
#[derive(Debug, Clone)]
pub struct Request {
    bytes: std::sync::Arc<[u8]>,
    path: String,
}

impl Request {
    /// `GET path` to `addr`.
    pub fn get(addr: SocketAddr, path: &str) -> Request {
        Request {
            bytes: format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n")
                .into_bytes()
                .into(),
            path: path.to_string(),
        }
    }

    /// Its path and query.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// An answer read whole: its status and body (valid until the connection's next request).
pub struct Answer<'a> {
    /// The status code.
    pub status: u16,
    /// The body, decoded from chunks when it came chunked.
    pub body: &'a [u8],
}

/// One keep-alive connection, its buffers kept across requests.
pub struct Conn {
    /// None once the server said it closes the connection: closed from this side too.
    stream: Option<TcpStream>,
    /// What was read of the current answer (head and body as sent).
    buf: Vec<u8>,
    /// A chunked body, decoded.
    body: Vec<u8>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field(
                "peer",
                &self.stream.as_ref().and_then(|s| s.peer_addr().ok()),
            )
            .finish()
    }
}

/// How an answer's body ends.
#[derive(Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

impl Conn {
    /// Opens a connection to `addr` (TCP_NODELAY).
    pub async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(Conn {
            stream: Some(stream),
            buf: Vec::with_capacity(READ_CHUNK),
            body: Vec::new(),
        })
    }

    /// Whether the server closed the connection or said it would: read from this side without
    /// sending anything (a peek that does not wait).
    pub fn is_closed(&self) -> bool {
        let Some(stream) = &self.stream else {
            return true;
        };
        let mut byte = [0u8; 1];
        // SAFETY: recv writes at most one byte into `byte`, on the connection's own descriptor;
        // MSG_PEEK leaves what it sees for the next read, MSG_DONTWAIT keeps it from waiting.
        let n = unsafe {
            libc::recv(
                stream.as_raw_fd(),
                byte.as_mut_ptr().cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        match n {
            0 => true,
            n if n > 0 => false,
            _ => {
                let e = std::io::Error::last_os_error().kind();
                !matches!(
                    e,
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                )
            }
        }
    }

    /// Whether the connection can carry the next request: the server has neither said nor
    /// shown that it closes it. Costs at most one read that finds nothing, which the answer's
    /// read would otherwise make (tokio keeps the socket's readiness between them).
    pub fn reusable(&self) -> bool {
        // Bytes nobody asked for make the connection as unusable as a close does.
        self.stream.as_ref().is_some_and(|s| {
            matches!(s.try_read(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
    }

    /// Sends `req` and reads its answer whole.
    pub async fn exchange(&mut self, req: &Request) -> Result<Answer<'_>, String> {
        self.stream
            .as_mut()
            .ok_or_else(|| "request: the connection is closed".to_string())?
            .write_all(&req.bytes)
            .await
            .map_err(|e| format!("request: {e}"))?;
        self.buf.clear();
        let (status, head, framing, closing) = self.read_head().await?;
        let body = match framing {
            Framing::Length(n) => {
                self.fill(head + n).await?;
                Some(head..head + n)
            }
            Framing::UntilClose => {
                while self.read_more().await? > 0 {}
                Some(head..self.buf.len())
            }
            Framing::Chunked => {
                self.read_chunked(head).await?;
                None
            }
        };
        if closing {
            self.stream = None;
        }
        Ok(Answer {
            status,
            body: match body {
                Some(range) => &self.buf[range],
                None => &self.body,
            },
        })
    }

    /// Reads until the answer's head is whole: its status, its length in bytes, how its body
    /// ends and whether the connection closes after it.
    async fn read_head(&mut self) -> Result<(u16, usize, Framing, bool), String> {
        loop {
            if !self.buf.is_empty() {
                let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
                let mut resp = httparse::Response::new(&mut headers);
                match resp.parse(&self.buf) {
                    Ok(httparse::Status::Complete(head)) => {
                        let status = resp.code.unwrap_or(0);
                        let (framing, closing) = framing(&resp)?;
                        return Ok((status, head, framing, closing));
                    }
                    Ok(httparse::Status::Partial) if self.buf.len() < MAX_HEAD => {}
                    Ok(httparse::Status::Partial) => {
                        return Err(format!("answer head over {MAX_HEAD} bytes"))
                    }
                    Err(e) => return Err(format!("answer: {e}")),
                }
            }
            if self.read_more().await? == 0 {
                return Err(if self.buf.is_empty() {
                    "connection closed before an answer".to_string()
                } else {
                    "connection closed inside an answer's head".to_string()
                });
            }
        }
    }

    /// Reads until `buf` holds `len` bytes.
    async fn fill(&mut self, len: usize) -> Result<(), String> {
        while self.buf.len() < len {
            if self.read_more().await? == 0 {
                return Err("connection closed inside an answer's body".to_string());
            }
        }
        Ok(())
    }

    /// Decodes a chunked body starting at `at` in `buf` into `body`.
    async fn read_chunked(&mut self, mut at: usize) -> Result<(), String> {
        self.body.clear();
        loop {
            let size = loop {
                match httparse::parse_chunk_size(&self.buf[at..]) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        at += used;
                        break usize::try_from(size).map_err(|_| "chunk too large".to_string())?;
                    }
                    Ok(httparse::Status::Partial) => self.fill(self.buf.len() + 1).await?,
                    Err(_) => return Err("answer: bad chunk size".to_string()),
                }
            };
            if size == 0 {
                // Trailers, if any, end with an empty line like the last chunk does.
                loop {
                    if let Some(end) = find_crlf(&self.buf[at..]) {
                        at += end + 2;
                        if end == 0 {
                            return Ok(());
                        }
                    } else {
                        self.fill(self.buf.len() + 1).await?;
                    }
                }
            }
            self.fill(at + size + 2).await?;
            self.body.extend_from_slice(&self.buf[at..at + size]);
            if &self.buf[at + size..at + size + 2] != b"\r\n" {
                return Err("answer: a chunk without its line end".to_string());
            }
            at += size + 2;
        }
    }

    /// One read into `buf`'s spare room; 0 when the server closed the connection.
    async fn read_more(&mut self) -> Result<usize, String> {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        let stream = self
            .stream
            .as_mut()
            .ok_or_else(|| "answer: the connection is closed".to_string())?;
        stream
            .read_buf(&mut self.buf)
            .await
            .map_err(|e| format!("answer: {e}"))
    }
}

/// How an answer's body ends and whether the connection closes after it.
fn framing(resp: &httparse::Response<'_, '_>) -> Result<(Framing, bool), String> {
    let mut length = None;
    let mut chunked = false;
    // HTTP/1.0 closes unless it says keep-alive; HTTP/1.1 keeps alive unless it says close.
    let mut closing = resp.version == Some(0);
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| "answer: bad Content-Length".to_string())?;
            length = Some(v);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    closing = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    closing = false;
                }
            }
        }
    }
    let status = resp.code.unwrap_or(0);
    let framing = if status == 204 || status == 304 || (100..200).contains(&status) {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok((framing, closing || matches!(framing, Framing::UntilClose)))
}

fn find_crlf(b: &[u8]) -> Option<usize> {
    b.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// A server that answers each request on one connection with the next of `answers`, then
    /// closes it.
    async fn serve(answers: Vec<&'static [u8]>) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            for a in answers {
                let mut got = Vec::new();
                while !got.ends_with(b"\r\n\r\n") {
                    let n = s.read(&mut buf).await.unwrap();
                    assert!(n > 0, "the client closed early");
                    got.extend_from_slice(&buf[..n]);
                }
                // Sent in two writes, so the client has to read more than once.
                let (a, b) = a.split_at(a.len() / 2);
                s.write_all(a).await.unwrap();
                s.flush().await.unwrap();
                tokio::task::yield_now().await;
                s.write_all(b).await.unwrap();
            }
        });
        addr
    }

    #[tokio::test]
    async fn bodies_by_length_by_chunks_and_until_close_are_read_whole() {
        let addr = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8\r\n, World!\r\n0\r\n\r\n",
            b"HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy",
            b"HTTP/1.0 200 OK\r\n\r\nto the end",
        ])
        .await;
        let req = Request::get(addr, "/plain");
        let mut c = Conn::open(addr).await.unwrap();
        let a = c.exchange(&req).await.unwrap();
        assert_eq!((a.status, a.body), (200, &b"Hello, World!"[..]));
        assert!(!c.is_closed());
        let a = c.exchange(&req).await.unwrap();
        assert_eq!((a.status, a.body), (200, &b"Hello, World!"[..]));
        let a = c.exchange(&req).await.unwrap();
        assert_eq!((a.status, a.body), (503, &b"busy"[..]));
        let a = c.exchange(&req).await.unwrap();
        assert_eq!((a.status, a.body), (200, &b"to the end"[..]));
        assert!(c.is_closed(), "a body read until close ends the connection");
    }

    #[tokio::test]
    async fn connection_close_is_honoured_and_a_cut_answer_fails() {
        let addr = serve(vec![
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        ])
        .await;
        let req = Request::get(addr, "/x");
        let mut c = Conn::open(addr).await.unwrap();
        assert_eq!(c.exchange(&req).await.unwrap().body, b"ok");
        assert!(c.is_closed());

        let addr = serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nshort"]).await;
        let mut c = Conn::open(addr).await.unwrap();
        let e = c.exchange(&req).await.err().unwrap();
        assert!(e.contains("closed inside an answer's body"), "{e}");
        assert!(c.is_closed(), "the server's close is seen without sending");
    }

    #[tokio::test]
    async fn a_connection_the_server_closes_is_closed_here_at_once() {
        // As gunicorn's sync worker does: answer, shut its side, then wait for the client's
        // close before taking the next connection.
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let _ = s.read(&mut buf).await.unwrap();
            s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
            s.shutdown().await.unwrap();
            let waited = std::time::Instant::now();
            let n = tokio::time::timeout(std::time::Duration::from_secs(2), s.read(&mut buf)).await;
            (n.ok().and_then(Result::ok), waited.elapsed())
        });
        let mut c = Conn::open(addr).await.unwrap();
        assert_eq!(
            c.exchange(&Request::get(addr, "/x")).await.unwrap().body,
            b"ok"
        );
        // The connection is still held here, as a load keeps it between requests.
        let (read, waited) = server.await.unwrap();
        assert_eq!(read, Some(0), "the server saw no close from the client");
        assert!(waited < std::time::Duration::from_millis(500), "{waited:?}");
        assert!(c.is_closed() && !c.reusable());
    }
}
