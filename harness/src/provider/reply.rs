//! What the fake model answers a request, decided before anything is written.

use std::time::Duration;

use serde_json::{json, Value};

/// An HTTP answer, decided before anything is written.
///
/// Kept apart from the sending so that fault injection (an HTTP 500, malformed JSON, a stream cut
/// midway, a hang) can later be added as a transformation of a `Reply` or of how it is written,
/// without touching the classification.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Body {
    /// `application/json`.
    Json(Value),
    /// `text/event-stream`: each value one `data:` event, then `data: [DONE]`.
    Events(Vec<Value>),
    /// [`Body::Events`] paced: each event its own HTTP chunk, flushed as it is written, each
    /// content event this long after the one before it (see `send_paced`).
    Paced(Vec<Value>, Duration),
    /// Bytes sent as they are, with this content type (malformed JSON).
    Raw(&'static str, Vec<u8>),
    /// The first half of `body`'s bytes, then the connection is closed (a dropped stream).
    Cut(Box<Body>),
    /// Nothing is sent until the fake model stops.
    Hang,
}

impl Reply {
    pub(super) fn json(status: u16, value: Value) -> Reply {
        Reply {
            status,
            body: Body::Json(value),
        }
    }

    /// An OpenAI-shaped error body.
    pub(super) fn error(status: u16, kind: &str, message: String) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
        )
    }
}
