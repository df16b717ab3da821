//! Closing tool calls that never got a result: a model turn's `functionCall` needs a
//! `functionResponse` in the user turn right after it, or the API rejects the history. The fix
//! adds error responses to that turn (or a new user turn when the next one is not a response
//! turn); nothing else in the document changes.

use serde_json::{Value, json};

use crate::formats::json_document::edit_pretty_js;

/// The checkpoint with every unanswered call answered by an error saying `message`, and how
/// many were closed; `None` when there is nothing to close or the document would not be
/// written back byte for byte apart from the new responses.
pub fn close_open_calls(bytes: &[u8], message: &str) -> Option<(Vec<u8>, usize)> {
    edit_pretty_js(bytes, |doc| close_history_calls(doc, message))
}

/// Answers every unanswered call of the history in `doc`; returns how many.
fn close_history_calls(doc: &mut Value, message: &str) -> Option<usize> {
    let history = match doc {
        Value::Array(h) => h,
        Value::Object(o) => o.get_mut("history")?.as_array_mut()?,
        _ => return None,
    };
    let mut closed = 0;
    let mut i = 0;
    while i < history.len() {
        let calls = calls_of(&history[i]);
        if calls.is_empty() {
            i += 1;
            continue;
        }
        let answers = history.get(i + 1).filter(|t| is_response_turn(t));
        let answered: Vec<(Option<String>, String)> = answers.map(responses_of).unwrap_or_default();
        let mut open = Vec::new();
        let mut taken = vec![false; answered.len()];
        for call in calls {
            // By id when the call has one, else by name (the API pairs them in order).
            let hit = answered.iter().enumerate().position(|(k, a)| {
                !taken[k]
                    && if call.0.is_some() {
                        a.0 == call.0
                    } else {
                        a.1 == call.1
                    }
            });
            match hit {
                Some(k) => taken[k] = true,
                None => open.push(call),
            }
        }
        if !open.is_empty() {
            let parts: Vec<Value> = open
                .iter()
                .map(|(id, name)| {
                    let mut r = serde_json::Map::new();
                    if let Some(id) = id {
                        r.insert("id".into(), id.clone().into());
                    }
                    r.insert("name".into(), name.clone().into());
                    r.insert("response".into(), json!({ "error": message }));
                    json!({ "functionResponse": r })
                })
                .collect();
            closed += parts.len();
            match history.get_mut(i + 1).filter(|t| is_response_turn(t)) {
                Some(turn) => turn.get_mut("parts")?.as_array_mut()?.extend(parts),
                None => history.insert(i + 1, json!({ "role": "user", "parts": parts })),
            }
        }
        i += 1;
    }
    Some(closed)
}

/// `(id, name)` of each `functionCall` in a model turn.
fn calls_of(turn: &Value) -> Vec<(Option<String>, String)> {
    if turn.get("role").and_then(Value::as_str) != Some("model") {
        return Vec::new();
    }
    parts(turn)
        .filter_map(|p| p.get("functionCall"))
        .map(id_name)
        .collect()
}

fn responses_of(turn: &Value) -> Vec<(Option<String>, String)> {
    parts(turn)
        .filter_map(|p| p.get("functionResponse"))
        .map(id_name)
        .collect()
}

/// A user turn made of function responses.
fn is_response_turn(turn: &Value) -> bool {
    turn.get("role").and_then(Value::as_str) == Some("user")
        && parts(turn).next().is_some()
        && parts(turn).all(|p| p.get("functionResponse").is_some())
}

fn parts(turn: &Value) -> impl Iterator<Item = &Value> {
    turn.get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn id_name(v: &Value) -> (Option<String>, String) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    (s("id"), s("name").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: &str = r#"{
  "history": [
    {
      "role": "user",
      "parts": [
        {
          "text": "context"
        }
      ]
    },
    {
      "role": "model",
      "parts": [
        {
          "functionCall": {
            "id": "a",
            "name": "ls",
            "args": {}
          }
        },
        {
          "functionCall": {
            "id": "b",
            "name": "cat",
            "args": {}
          }
        }
      ]
    },
    {
      "role": "user",
      "parts": [
        {
          "functionResponse": {
            "id": "a",
            "name": "ls",
            "response": {
              "output": "x"
            }
          }
        }
      ]
    },
    {
      "role": "model",
      "parts": [
        {
          "functionCall": {
            "name": "rm",
            "args": {}
          }
        }
      ]
    }
  ]
}"#;

    #[test]
    fn missing_responses_are_added_where_the_api_wants_them() {
        let (out, closed) = close_open_calls(OPEN.as_bytes(), "gone").unwrap();
        assert_eq!(closed, 2);
        let v: Value = serde_json::from_slice(&out).unwrap();
        let h = v["history"].as_array().unwrap();
        assert_eq!(h.len(), 5);
        // `b` joins the response turn that answers `a`; `rm` gets a new user turn.
        assert_eq!(h[2]["parts"][1]["functionResponse"]["id"], "b");
        assert_eq!(
            h[2]["parts"][1]["functionResponse"]["response"]["error"],
            "gone"
        );
        assert_eq!(h[4]["role"], "user");
        assert_eq!(h[4]["parts"][0]["functionResponse"]["name"], "rm");
        assert!(h[4]["parts"][0]["functionResponse"].get("id").is_none());
        assert!(close_open_calls(&out, "gone").is_none(), "idempotent");
    }

    #[test]
    fn answered_checkpoints_are_left_alone() {
        let path = format!(
            "{}/fixtures/checkpoint/checkpoint-object.json",
            env!("CARGO_MANIFEST_DIR")
        );
        assert!(close_open_calls(&std::fs::read(path).unwrap(), "x").is_none());
    }
}
