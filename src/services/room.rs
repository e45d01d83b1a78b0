//! The lab's own WebSocket chat room, in Rust: the fan-out scenario's reference server
//! (`ws_rust_reference`), speaking room.py's format, so a room of Python servers can be read
//! against what the generator measures of a server whose broadcast costs next to nothing.
//!
//! One tokio thread. Each client gets a writer task fed by an unbounded channel; a message
//! received is stamped with the wall clock (`<server_ns> <text>`), held `delay` (the
//! known-answer test's deliberate delay), and handed to every client's channel, the sender's
//! included. `GET /plain` is answered before any WebSocket handshake (a peek at the request
//! line), so the lab's readiness check works as for every server. The server takes a bound
//! listener and a shutdown future (mini-redis's shape).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::stream::StreamExt;
use futures_util::SinkExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

type Room = Arc<Mutex<Vec<UnboundedSender<Message>>>>;

/// The answer to `GET /plain`.
const PLAIN: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!";

/// Each client's buffers: the room's messages are tens of bytes (tungstenite's default 128 KiB
/// read buffer would be most of what a client costs this server).
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
}

/// Serves the room on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, delay: Duration, shutdown: impl Future<Output = ()>) {
    let room: Room = Arc::default();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(client(stream, room.clone(), delay));
                }
            }
        }
    }
}

/// One connection: `GET /plain` answered and closed, anything else a client of the room.
async fn client(mut stream: TcpStream, room: Room, delay: Duration) {
    let mut head = [0u8; 16];
    if let Ok(n) = stream.peek(&mut head).await {
        if head[..n].starts_with(b"GET /plain") {
            let _ = stream.write_all(PLAIN).await;
            let _ = stream.shutdown().await;
            return;
        }
    }
    let Ok(ws) = tokio_tungstenite::accept_async_with_config(stream, Some(config())).await else {
        return;
    };
    let (mut writer, mut reader) = ws.split();
    let (tx, mut rx) = unbounded_channel::<Message>();
    room.lock().expect("not poisoned").push(tx);
    tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if writer.send(m).await.is_err() {
                break;
            }
        }
    });
    while let Some(Ok(msg)) = reader.next().await {
        let Ok(text) = msg.to_text() else { continue };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let stamped = Message::text(format!("{now} {text}"));
        if !delay.is_zero() {
            super::precise_timer::sleep(delay).await;
        }
        // A client whose writer has ended is dropped from the room.
        room.lock()
            .expect("not poisoned")
            .retain(|c| c.send(stamped.clone()).is_ok());
    }
}
