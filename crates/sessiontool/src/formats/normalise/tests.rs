//! The normalisation step's rules, on small targets declared here.

use super::head::{self, Facts, Head};
use super::*;
use crate::diag::LossReport;
use crate::formats::WriteOptions;
use crate::model::Meta;

const WORDS: Unplaced = Unplaced {
    extra_fields: "extra",
    usage_fields: UsageFields::InExtraFields,
    part_fields: None,
    signatures: None,
    title: Some("title"),
    summary: None,
    session_fields: Some("fields"),
    project_hash: false,
};

const STRICT: Target = Target {
    name: "strict",
    session_ids: SessionIds::uuids("strict/", "only UUIDs", MissingId::Refused),
    start: Start {
        from: &[Time::Started, Time::FirstNode, Time::Now],
        otherwise: Err(LossWords {
            code: "timestamps",
            message: "no time",
        }),
    },
    cwd: Cwd {
        directories: true,
        unknown: Some(LossWords {
            code: "cwd-unknown",
            message: "no cwd",
        }),
    },
    calls: CallIds {
        prefix: "toolu_",
        seed: "{session}/{node}/{index}",
        digits: 8,
        allowed: Some(|c| c.is_ascii_alphanumeric()),
        pairing: Pairing::Loose,
        open: Some(LossWords {
            code: "open-tool-calls",
            message: "open",
        }),
    },
    unplaced: WORDS,
};

const LOOSE: Target = Target {
    name: "loose",
    session_ids: SessionIds::any(MissingId::FromNodeCount),
    start: Start {
        from: &[Time::Now],
        otherwise: Ok("epoch"),
    },
    cwd: Cwd {
        directories: false,
        unknown: None,
    },
    calls: CallIds {
        pairing: Pairing::Strict,
        ..CallIds::KEPT
    },
    unplaced: WORDS,
};

fn meta(id: Option<&str>) -> Meta {
    Meta {
        id: id.map(String::from),
        ..Meta::default()
    }
}

#[test]
fn an_id_the_target_does_not_take_is_derived_and_said() {
    let mut losses = LossReport::default();
    let id = head::session_id(&STRICT, &meta(Some("abc")), Facts::default(), &mut losses);
    let id = id.expect("an id");
    assert!(crate::ids::is_uuid(&id));
    assert_eq!(id, crate::ids::derived_uuid("strict/abc"));
    assert_eq!(losses.losses[0].code, "session-id");
    assert!(losses.losses[0].message.contains("(only UUIDs)"));
    // A session of the target's own is not told it.
    let own = Meta {
        source_format: Some("strict".into()),
        ..meta(Some("abc"))
    };
    let mut unsaid = LossReport::default();
    let again = head::session_id(&STRICT, &own, Facts::default(), &mut unsaid);
    assert_eq!(again.ok(), Some(id));
    assert!(unsaid.is_empty());
    assert!(head::session_id(&STRICT, &meta(None), Facts::default(), &mut losses).is_err());
}

#[test]
fn a_session_without_an_id_gets_the_one_its_target_derives() {
    let mut losses = LossReport::default();
    let facts = Facts {
        nodes: 3,
        ..Facts::default()
    };
    let id = head::session_id(&LOOSE, &meta(None), facts, &mut losses);
    assert_eq!(id.ok(), Some(crate::ids::derived_uuid("loose/3")));
    let kept = head::session_id(&LOOSE, &meta(Some("any id")), facts, &mut losses);
    assert_eq!(kept.ok().as_deref(), Some("any id"));
    assert!(losses.is_empty());
}

#[test]
fn the_head_says_what_it_could_not_find_in_order() {
    let mut losses = LossReport::default();
    let id = "0b9e3f4e-7d8c-4e0e-9f59-8c8f0d6c1a11";
    let dirs = Meta {
        directories: Some(vec!["/work".into()]),
        ..meta(Some(id))
    };
    let facts = Facts {
        first_time: Some("t1"),
        ..Facts::default()
    };
    let head = Head::of(&STRICT, &dirs, facts, &WriteOptions::default(), &mut losses);
    let head = head.expect("a head");
    assert_eq!((head.id.as_str(), head.start.as_str()), (id, "t1"));
    assert_eq!(head.cwd, "/work");
    assert!(losses.is_empty());
    let bare = meta(Some(id));
    let head = Head::of(
        &STRICT,
        &bare,
        Facts::default(),
        &WriteOptions::default(),
        &mut losses,
    );
    assert_eq!(head.map(|h| h.start).ok().as_deref(), Some(""));
    let codes: Vec<_> = losses.losses.iter().map(|l| l.code).collect();
    assert_eq!(codes, ["timestamps", "cwd-unknown"]);
}

#[test]
fn calls_get_acceptable_ids_and_results_find_them() {
    let mut calls = Calls::new(&STRICT.calls);
    let a = calls.call(Some("a.1"), "read", ("s", "n", 0));
    assert_eq!(a, "a_1");
    let b = calls.call(None, "read", ("s", "n", 1));
    assert!(b.starts_with("toolu_") && b.len() == 14);
    // By its own id, as written.
    assert_eq!(calls.answer(Some("a.1"), None).id, "a_1");
    // An id that names no call: the oldest open call of the name.
    let answer = calls.answer(Some("other"), Some("read"));
    assert_eq!(
        (answer.id.as_str(), answer.name.as_deref()),
        (b.as_str(), Some("read"))
    );
    calls.call(Some("c"), "write", ("s", "m", 0));
    let mut losses = LossReport::default();
    calls.finish(&mut losses);
    assert_eq!(losses.losses[0].count, 1);
}

#[test]
fn strict_pairing_keeps_an_unknown_id_and_closes_one_call() {
    let mut calls = Calls::new(&LOOSE.calls);
    calls.call(Some("x"), "read", ("s", "n", 0));
    calls.call(Some("x"), "read", ("s", "n", 1));
    assert_eq!(calls.answer(Some("y"), Some("read")).id, "y");
    assert_eq!(calls.answer(Some("x"), None).id, "x");
    // The second call of the same id is still open.
    let answer = calls.answer(None, None);
    assert_eq!(
        (answer.id.as_str(), answer.name.as_deref()),
        ("x", Some("read"))
    );
    assert_eq!(calls.answer(None, None).id, "");
}
