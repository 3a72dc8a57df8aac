//! A panic of the kernel (a bug) as an ordinary error that names its cause and place, for the bindings to
//! raise as a RuntimeError (src/py/mod.rs, `unpanic`).
//!
//! Without this PyO3 raises `PanicException`, a BaseException that `except Exception` misses (and the
//! default hook prints a backtrace on stderr), so a kernel bug took down a command or the app with a
//! traceback instead of its one-line error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Where and why the last panic happened, as the panic hook saw it (the payload alone has no place).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Replaces the process's panic hook by one that prints nothing and keeps the panic's place and message
/// on one line for `catch` (a panic is an error, not a backtrace on stderr). The extension calls it when
/// Python imports it.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) =
            info.to_string().replace(":\n", ": ").replace('\n', " ");
    }));
}

/// Runs `f`; a panic becomes Err with the one-line message the user sees.
///
/// Example: `catch(|| 2 + 2)` is `Ok(4)`; `catch(|| panic!("boom"))` is an Err whose text says "the native
/// kernel failed (panicked at src/...: boom)" once `install_hook` ran, "(boom)" before.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let place = std::mem::take(&mut *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()));
        let cause = if !place.is_empty() {
            place
        } else if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_string()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "a panic".to_string()
        };
        format!(
            "the native kernel failed ({cause}); this is a bug: please report it, and set BPE_STUDIO_PURE=1 to use the Python engine meanwhile"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test for the whole life of the hook: it is global to the process, and the other tests' failures
    // must keep libtest's own hook (ours prints nothing).
    #[test]
    fn a_panic_becomes_one_line_naming_its_cause_and_place_and_the_guard_stays_usable() {
        assert_eq!(catch(|| 2 + 2), Ok(4));

        // Before the hook: the payload, a &str or a String, is the cause.
        let plain = catch(|| panic!("plain")).unwrap_err();
        assert!(plain.starts_with("the native kernel failed (plain); this is a bug"), "{plain}");
        let formatted = catch(|| panic!("formatted {}", 7)).unwrap_err();
        assert!(formatted.contains("(formatted 7)"), "{formatted}");
        let other = catch(|| std::panic::panic_any(42u8)).unwrap_err();
        assert!(other.contains("(a panic)"), "{other}");

        install_hook();
        let boom = catch(|| panic!("boom\nsecond line")).unwrap_err();
        let _ = std::panic::take_hook(); // libtest's default hook again
        assert!(!boom.contains('\n'), "{boom}");
        assert!(boom.starts_with("the native kernel failed (panicked at src/guard.rs:"), "{boom}");
        assert!(boom.contains(": boom second line)"), "{boom}");
        assert!(boom.ends_with("set BPE_STUDIO_PURE=1 to use the Python engine meanwhile"), "{boom}");

        // The place was taken: the next panic does not report this one's.
        let again = catch(|| panic!("again")).unwrap_err();
        assert!(again.contains("(again)"), "{again}");
        assert_eq!(catch(|| "still usable"), Ok("still usable"));
    }
}
